kernel void map_views_fused(
    global const float* restrict xss,
    global float* restrict output,
    const int N) {
  for (int gid9 = get_global_id(0); gid9 < N; gid9 += get_global_size(0)) {
    {
      float acc10;
      acc10 = 0.0f;
      for (int i11 = 0; i11 < 8; i11 += 1) {
        acc10 = (acc10 + (-xss[i11 + 8 * gid9]));
      }
      output[gid9] = acc10;
    }
  }
}
