kernel void scal_scalar_input(
    const float a,
    global const float* restrict xs,
    global float* restrict output,
    const int N) {
  for (int gid1 = get_global_id(0); gid1 < N; gid1 += get_global_size(0)) {
    output[gid1] = (xs[gid1] * a);
  }
}
