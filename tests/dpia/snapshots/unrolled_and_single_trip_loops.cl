kernel void unrolled_and_single_trip_loops(
    global const float* restrict xs,
    global float* restrict output,
    const int N) {
  for (int gid1 = get_global_id(0); gid1 < N / 4; gid1 += get_global_size(0)) {
    {
      float acc3;
      acc3 = 0.0f;
      acc3 = (acc3 + xs[4 * gid1]);
      output[4 * gid1] = acc3;
    }
    {
      float acc3;
      acc3 = 0.0f;
      acc3 = (acc3 + xs[4 * gid1 + 1]);
      output[4 * gid1 + 1] = acc3;
    }
    {
      float acc3;
      acc3 = 0.0f;
      acc3 = (acc3 + xs[4 * gid1 + 2]);
      output[4 * gid1 + 2] = acc3;
    }
    {
      float acc3;
      acc3 = 0.0f;
      acc3 = (acc3 + xs[4 * gid1 + 3]);
      output[4 * gid1 + 3] = acc3;
    }
  }
}
