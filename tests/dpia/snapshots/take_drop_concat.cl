kernel void take_drop_concat(
    global const float* restrict xs,
    global float* restrict output,
    const int N) {
  for (int gid1 = get_global_id(0); gid1 < N - 56; gid1 += get_global_size(0)) {
    output[gid1] = ((((gid1) < (N - 60)) ? xs[gid1 + 60] : xs[gid1 - N + 60]) * 3.0f);
  }
}
