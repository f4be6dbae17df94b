kernel void bool_buffers(
    global const uchar* restrict bs,
    global const float* restrict xs,
    global float* restrict output_0,
    global uchar* restrict output_1,
    const int N) {
  for (int gid1 = get_global_id(0); gid1 < N; gid1 += get_global_size(0)) {
    output_0[gid1] = (bs[gid1] ? xs[gid1] : 0.0f);
    output_1[gid1] = (xs[gid1] > 0.0f);
  }
}
