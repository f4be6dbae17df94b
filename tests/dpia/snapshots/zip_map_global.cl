kernel void zip_map_global(
    global const float* restrict xs,
    global const float* restrict ys,
    global float* restrict output,
    const int N) {
  for (int gid1 = get_global_id(0); gid1 < N; gid1 += get_global_size(0)) {
    output[gid1] = ((xs[gid1] * ys[gid1]) + 1.0f);
  }
}
