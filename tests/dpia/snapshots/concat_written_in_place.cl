kernel void concat_written_in_place_0(
    global const float* restrict xs,
    global const float* restrict m,
    global float* restrict output_0,
    global float* restrict output_1,
    const int M,
    const int N) {
  {
    const int gid1 = get_global_id(0);
    if (gid1 < 60) {
      output_0[gid1] = (xs[gid1] * 2.0f);
    }
  }
}

kernel void concat_written_in_place_1(
    global const float* restrict xs,
    global const float* restrict m,
    global float* restrict output_0,
    global float* restrict output_1,
    const int M,
    const int N) {
  {
    const int gid2 = get_global_id(0);
    if (gid2 < 4) {
      output_0[gid2 + 60] = (xs[gid2 + 60] + 1.0f);
    }
  }
}

kernel void concat_written_in_place_2(
    global const float* restrict xs,
    global const float* restrict m,
    global float* restrict output_0,
    global float* restrict output_1,
    const int M,
    const int N) {
  for (int gid3 = get_global_id(0); gid3 < M; gid3 += get_global_size(0)) {
    for (int i4 = 0; i4 < 2; i4 += 1) {
      output_1[i4 + N * gid3] = (m[i4 + N * gid3] * m[i4 + N * gid3]);
    }
    for (int i5 = 0; i5 < N - 2; i5 += 1) {
      output_1[i5 + N * gid3 + 2] = (0.0f - m[i5 + N * gid3 + 2]);
    }
  }
}
