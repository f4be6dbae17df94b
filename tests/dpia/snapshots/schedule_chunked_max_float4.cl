kernel void schedule_chunked_max_float4_0(
    global const float* restrict xs,
    global float* restrict output,
    global float* restrict tmp2,
    const int N) {
  for (int gid3 = get_global_id(0); gid3 < N / 32; gid3 += get_global_size(0)) {
    {
      float4 acc4;
      acc4 = ((float4)(-INFINITY));
      for (int i5 = 0; i5 < 8; i5 += 1) {
        acc4 = fmax(acc4, ((global const float4*)xs)[i5 + 8 * gid3]);
      }
      {
        float acc8;
        acc8 = (-INFINITY);
        acc8 = fmax(acc8, acc4.s0);
        acc8 = fmax(acc8, acc4.s1);
        acc8 = fmax(acc8, acc4.s2);
        acc8 = fmax(acc8, acc4.s3);
        tmp2[gid3] = acc8;
      }
    }
  }
}

kernel void schedule_chunked_max_float4_1(
    global const float* restrict xs,
    global float* restrict output,
    global float* restrict tmp2,
    const int N) {
  {
    float acc1;
    acc1 = (-INFINITY);
    for (int i13 = 0; i13 < N / 32; i13 += 1) {
      acc1 = fmax(acc1, tmp2[i13]);
    }
    output[0] = acc1;
  }
}
