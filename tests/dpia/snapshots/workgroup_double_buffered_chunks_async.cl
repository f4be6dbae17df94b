#pragma OPENCL EXTENSION cl_khr_fp64 : enable
kernel void workgroup_double_buffered_chunks_async(
    global const float* restrict g,
    global float* restrict output) {
  local float tmp4[32] __attribute__((aligned(16)));
  local float tmp6[32] __attribute__((aligned(16)));
  {
    const int wg1 = get_group_id(0);
    {
      float acc2;
      acc2 = 0.0f;
      for (int lid5 = get_local_id(0); lid5 < 32; lid5 += get_local_size(0)) {
        tmp4[lid5] = (g[96 * wg1 + lid5] * 2.0f);
      }
      for (int lid7 = get_local_id(0); lid7 < 32; lid7 += get_local_size(0)) {
        tmp6[lid7] = (g[96 * wg1 + lid7 + 32] * 2.0f);
      }
      {
        float acc10;
        acc10 = 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int i11 = 0; i11 < 32; i11 += 1) {
          acc10 = (acc10 + tmp4[i11]);
        }
        acc2 = (acc2 + acc10);
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid9 = get_local_id(0); lid9 < 32; lid9 += get_local_size(0)) {
        tmp4[lid9] = (g[96 * wg1 + lid9 + 64] * 2.0f);
      }
      {
        float acc14;
        acc14 = 0.0f;
        for (int i15 = 0; i15 < 32; i15 += 1) {
          acc14 = (acc14 + tmp6[i15]);
        }
        acc2 = (acc2 + acc14);
      }
      {
        float acc19;
        acc19 = 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int i20 = 0; i20 < 32; i20 += 1) {
          acc19 = (acc19 + tmp4[i20]);
        }
        acc2 = (acc2 + acc19);
      }
      if ((get_local_id(0) == 0)) {
        output[wg1] = acc2;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}
