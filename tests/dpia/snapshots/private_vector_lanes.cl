kernel void private_vector_lanes(
    global const float* restrict xs,
    global float* restrict output,
    const int N) {
  for (int gid1 = get_global_id(0); gid1 < N / 4; gid1 += get_global_size(0)) {
    {
      float4 tmp2;
      tmp2 = (((global const float4*)xs)[gid1] + 1.0f);
      {
        float acc3;
        acc3 = 0.0f;
        acc3 = (acc3 + tmp2.s0);
        acc3 = (acc3 + tmp2.s1);
        acc3 = (acc3 + tmp2.s2);
        acc3 = (acc3 + tmp2.s3);
        output[gid1] = acc3;
      }
    }
  }
}
