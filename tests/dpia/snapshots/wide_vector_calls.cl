kernel void wide_vector_calls(
    global const float* restrict xs,
    global float* restrict output,
    const int N) {
  for (int gid1 = get_global_id(0); gid1 < N / 32; gid1 += get_global_size(0)) {
    {
      float tmp2[32] __attribute__((aligned(64)));
      for (int i3 = 0; i3 < 2; i3 += 1) {
        {
          float16 wide0 = ((((global const float16*)xs)[i3 + 2 * gid1] < 0.0f) ? ((float16)(rsqrt((fabs(((global const float8*)xs)[2 * i3 + 4 * gid1]) + 1.0f)), rsqrt((fabs(((global const float8*)xs)[2 * i3 + 4 * gid1 + 1]) + 1.0f)))) : (((float16)(fmin(fmax(fmax(fmin(fma(sin(((global const float8*)xs)[2 * i3 + 4 * gid1]), cos(((global const float8*)xs)[2 * i3 + 4 * gid1]), sqrt(fabs(((global const float8*)xs)[2 * i3 + 4 * gid1]))), 0.75f), (-0.75f)), (-0.5f)), 0.5f), fmin(fmax(fmax(fmin(fma(sin(((global const float8*)xs)[2 * i3 + 4 * gid1 + 1]), cos(((global const float8*)xs)[2 * i3 + 4 * gid1 + 1]), sqrt(fabs(((global const float8*)xs)[2 * i3 + 4 * gid1 + 1]))), 0.75f), (-0.75f)), (-0.5f)), 0.5f))) + ((float16)(convert_float8(convert_int8((((global const float8*)xs)[2 * i3 + 4 * gid1] * 10.0f))), convert_float8(convert_int8((((global const float8*)xs)[2 * i3 + 4 * gid1 + 1] * 10.0f)))))));
          vstore8(wide0.s01234567, 2 * i3, tmp2);
          vstore8(wide0.s89abcdef, 2 * i3 + 1, tmp2);
        }
      }
      for (int i5 = 0; i5 < 2; i5 += 1) {
        ((global float16*)output)[i5 + 2 * gid1] = (((float16)(vload8(2 * i5, tmp2), vload8(2 * i5 + 1, tmp2))) * 2.0f);
      }
    }
  }
}
