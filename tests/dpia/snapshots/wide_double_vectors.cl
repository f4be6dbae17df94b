#pragma OPENCL EXTENSION cl_khr_fp64 : enable
kernel void wide_double_vectors(
    global const float* restrict xs,
    global float* restrict output,
    const int N) {
  for (int gid1 = get_global_id(0); gid1 < N / 8; gid1 += get_global_size(0)) {
    ((global float8*)output)[gid1] = ((float8)(convert_float4((exp(convert_double4(((global const float4*)xs)[2 * gid1])) * 0.5)), convert_float4((exp(convert_double4(((global const float4*)xs)[2 * gid1 + 1])) * 0.5))));
  }
}
