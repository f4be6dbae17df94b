kernel void stencil_pad_const(
    global const float* restrict xs,
    global float* restrict output,
    const int N) {
  for (int gid1 = get_global_id(0); gid1 < N; gid1 += get_global_size(0)) {
    {
      float acc2;
      acc2 = (-1.0f);
      for (int i3 = 0; i3 < 3; i3 += 1) {
        acc2 = fmax(acc2, ((((i3 + gid1) >= (1)) && ((i3 + gid1) < (N + 1))) ? xs[i3 + gid1 - 1] : 9.0f));
      }
      output[gid1] = acc2;
    }
  }
}
