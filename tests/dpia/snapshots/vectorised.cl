kernel void vectorised(
    global const float* restrict xs,
    global float* restrict output,
    const int N) {
  for (int gid1 = get_global_id(0); gid1 < N / 4; gid1 += get_global_size(0)) {
    vstore4(((vload4(gid1, xs) * 2.0f) + 1.0f), gid1, output);
  }
}
