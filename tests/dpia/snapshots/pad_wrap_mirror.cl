kernel void pad_wrap_mirror(
    global const float* restrict xs,
    global float* restrict output,
    const int N) {
  for (int gid1 = get_global_id(0); gid1 < N + 3; gid1 += get_global_size(0)) {
    output[gid1] = (xs[((((gid1 - 2)) % N + N) % N)] - xs[((-((gid1 - 2) > (-gid1 + 1) ? (gid1 - 2) : (-gid1 + 1)) + 2 * N - 1) < (((gid1 - 2) > (-gid1 + 1) ? (gid1 - 2) : (-gid1 + 1))) ? (-((gid1 - 2) > (-gid1 + 1) ? (gid1 - 2) : (-gid1 + 1)) + 2 * N - 1) : (((gid1 - 2) > (-gid1 + 1) ? (gid1 - 2) : (-gid1 + 1))))]);
  }
}
