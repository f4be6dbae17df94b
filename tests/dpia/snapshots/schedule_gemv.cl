kernel void schedule_gemv(
    global const float* restrict mat,
    global const float* restrict xs,
    global const float* restrict ys,
    const float alpha,
    const float beta,
    global float* restrict output,
    const int M,
    const int N) {
  for (int gid1 = get_global_id(0); gid1 < M; gid1 += get_global_size(0)) {
    {
      float acc2;
      acc2 = 0.0f;
      for (int i3 = 0; i3 < N; i3 += 1) {
        acc2 = (acc2 + (mat[i3 + N * gid1] * xs[i3]));
      }
      output[gid1] = ((alpha * acc2) + (ys[gid1] * beta));
    }
  }
}
