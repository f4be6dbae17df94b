kernel void schedule_dot_0(
    global const float* restrict xs,
    global const float* restrict ys,
    global float* restrict output,
    global float* restrict tmp2,
    const int N) {
  for (int gid3 = get_global_id(0); gid3 < N / 16; gid3 += get_global_size(0)) {
    {
      float acc4;
      acc4 = 0.0f;
      for (int i5 = 0; i5 < 16; i5 += 1) {
        acc4 = (acc4 + (xs[i5 + 16 * gid3] * ys[i5 + 16 * gid3]));
      }
      tmp2[gid3] = acc4;
    }
  }
}

kernel void schedule_dot_1(
    global const float* restrict xs,
    global const float* restrict ys,
    global float* restrict output,
    global float* restrict tmp2,
    const int N) {
  {
    float acc1;
    acc1 = 0.0f;
    for (int i6 = 0; i6 < N / 16; i6 += 1) {
      acc1 = (acc1 + tmp2[i6]);
    }
    output[0] = acc1;
  }
}
