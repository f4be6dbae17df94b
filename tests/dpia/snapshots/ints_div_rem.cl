kernel void ints_div_rem(
    global const int* restrict a,
    global const int* restrict b,
    global int* restrict output,
    const int N) {
  for (int gid1 = get_global_id(0); gid1 < N; gid1 += get_global_size(0)) {
    output[gid1] = ((a[gid1] / b[gid1]) + (a[gid1] % b[gid1]));
  }
}
