kernel void workgroup_local_barrier(
    global const float* restrict xs,
    global float* restrict output,
    const int N) {
  local float tmp2[64] __attribute__((aligned(16)));
  {
    const int wg1 = get_group_id(0);
    if (wg1 < N / 64) {
      for (int lid3 = get_local_id(0); lid3 < 64; lid3 += get_local_size(0)) {
        tmp2[lid3] = (xs[64 * wg1 + lid3] * 2.0f);
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid4 = get_local_id(0); lid4 < 32; lid4 += get_local_size(0)) {
        {
          float acc5;
          acc5 = 0.0f;
          for (int i6 = 0; i6 < 2; i6 += 1) {
            acc5 = (acc5 + tmp2[2 * lid4 + i6]);
          }
          output[32 * wg1 + lid4] = acc5;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
}
