kernel void seed_reduction_v5(
    global const float* restrict xs,
    global float* restrict output,
    const int N) {
  local float tmp2[1] __attribute__((aligned(16)));
  local float tmp3[64] __attribute__((aligned(16)));
  {
    const int wg1 = get_group_id(0);
    if (wg1 < N / 128) {
      for (int lid4 = get_local_id(0); lid4 < 64; lid4 += get_local_size(0)) {
        {
          float acc6;
          acc6 = 0.0f;
          for (int i7 = 0; i7 < 2; i7 += 1) {
            acc6 = (acc6 + xs[128 * wg1 + lid4 + 64 * i7]);
          }
          tmp3[lid4] = acc6;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid10 = get_local_id(0); lid10 < 1; lid10 += get_local_size(0)) {
        {
          float acc12;
          acc12 = 0.0f;
          for (int i13 = 0; i13 < 64; i13 += 1) {
            acc12 = (acc12 + tmp3[64 * lid10 + i13]);
          }
          tmp2[lid10] = acc12;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid16 = get_local_id(0); lid16 < 1; lid16 += get_local_size(0)) {
        output[wg1 + lid16] = tmp2[lid16];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
}
