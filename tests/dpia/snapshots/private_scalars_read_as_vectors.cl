kernel void private_scalars_read_as_vectors(
    global const float* restrict xs,
    global float* restrict output,
    const int N) {
  for (int gid1 = get_global_id(0); gid1 < N / 16; gid1 += get_global_size(0)) {
    {
      float tmp2[16] __attribute__((aligned(16)));
      tmp2[0] = (xs[16 * gid1] * 2.0f);
      tmp2[1] = (xs[16 * gid1 + 1] * 2.0f);
      tmp2[2] = (xs[16 * gid1 + 2] * 2.0f);
      tmp2[3] = (xs[16 * gid1 + 3] * 2.0f);
      tmp2[4] = (xs[16 * gid1 + 4] * 2.0f);
      tmp2[5] = (xs[16 * gid1 + 5] * 2.0f);
      tmp2[6] = (xs[16 * gid1 + 6] * 2.0f);
      tmp2[7] = (xs[16 * gid1 + 7] * 2.0f);
      tmp2[8] = (xs[16 * gid1 + 8] * 2.0f);
      tmp2[9] = (xs[16 * gid1 + 9] * 2.0f);
      tmp2[10] = (xs[16 * gid1 + 10] * 2.0f);
      tmp2[11] = (xs[16 * gid1 + 11] * 2.0f);
      tmp2[12] = (xs[16 * gid1 + 12] * 2.0f);
      tmp2[13] = (xs[16 * gid1 + 13] * 2.0f);
      tmp2[14] = (xs[16 * gid1 + 14] * 2.0f);
      tmp2[15] = (xs[16 * gid1 + 15] * 2.0f);
      ((global float4*)output)[4 * gid1] = (vload4(0, tmp2) + 1.0f);
      ((global float4*)output)[4 * gid1 + 1] = (vload4(1, tmp2) + 1.0f);
      ((global float4*)output)[4 * gid1 + 2] = (vload4(2, tmp2) + 1.0f);
      ((global float4*)output)[4 * gid1 + 3] = (vload4(3, tmp2) + 1.0f);
    }
  }
}
