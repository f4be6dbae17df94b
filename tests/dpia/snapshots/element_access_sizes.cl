kernel void element_access_sizes(
    global const float* restrict xs,
    global const int* restrict idx,
    global float* restrict output,
    const int N) {
  for (int gid1 = get_global_id(0); gid1 < N; gid1 += get_global_size(0)) {
    {
      int ix2;
      ix2 = max(min(idx[gid1], (N - 1)), 0);
      output[gid1] = (((xs[ix2] * 2.0f) + xs[0]) + (xs[N - 1] / ((float)(N))));
    }
  }
}
