kernel void stencil_pad_clamp(
    global const float* restrict xs,
    global float* restrict output,
    const int N) {
  for (int gid1 = get_global_id(0); gid1 < N; gid1 += get_global_size(0)) {
    {
      float acc2;
      acc2 = 0.0f;
      acc2 = (acc2 + xs[((N - 1) < (((0) > (gid1 - 1) ? (0) : (gid1 - 1))) ? (N - 1) : (((0) > (gid1 - 1) ? (0) : (gid1 - 1))))]);
      acc2 = (acc2 + xs[gid1]);
      acc2 = (acc2 + xs[((N - 1) < (gid1 + 1) ? (N - 1) : (gid1 + 1))]);
      output[gid1] = acc2;
    }
  }
}
