kernel void schedule_scal_vectorized(
    const float a,
    global const float* restrict xs,
    global float* restrict output,
    const int N) {
  for (int gid1 = get_global_id(0); gid1 < N / 4; gid1 += get_global_size(0)) {
    ((global float4*)output)[gid1] = (((global const float4*)xs)[gid1] * a);
  }
}
