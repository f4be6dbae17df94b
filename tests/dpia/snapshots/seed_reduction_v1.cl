kernel void seed_reduction_v1(
    global const float* restrict xs,
    global float* restrict output,
    const int N) {
  local float tmp2[64] __attribute__((aligned(16)));
  local float tmp3[64] __attribute__((aligned(16)));
  local float tmp4[64] __attribute__((aligned(16)));
  local float tmp5[64] __attribute__((aligned(16)));
  local float tmp6[64] __attribute__((aligned(16)));
  local float tmp7[64] __attribute__((aligned(16)));
  local float tmp8[64] __attribute__((aligned(16)));
  local float tmp10[64] __attribute__((aligned(16)));
  local float tmp14[64] __attribute__((aligned(16)));
  local float tmp15[64] __attribute__((aligned(16)));
  local float tmp17[64] __attribute__((aligned(16)));
  local float tmp23[64] __attribute__((aligned(16)));
  local float tmp24[64] __attribute__((aligned(16)));
  local float tmp25[64] __attribute__((aligned(16)));
  local float tmp27[64] __attribute__((aligned(16)));
  local float tmp31[64] __attribute__((aligned(16)));
  local float tmp32[64] __attribute__((aligned(16)));
  local float tmp34[64] __attribute__((aligned(16)));
  local float tmp42[64] __attribute__((aligned(16)));
  local float tmp43[64] __attribute__((aligned(16)));
  local float tmp44[64] __attribute__((aligned(16)));
  local float tmp45[64] __attribute__((aligned(16)));
  local float tmp47[64] __attribute__((aligned(16)));
  local float tmp51[64] __attribute__((aligned(16)));
  local float tmp52[64] __attribute__((aligned(16)));
  local float tmp54[64] __attribute__((aligned(16)));
  local float tmp60[64] __attribute__((aligned(16)));
  local float tmp61[64] __attribute__((aligned(16)));
  local float tmp62[64] __attribute__((aligned(16)));
  local float tmp64[64] __attribute__((aligned(16)));
  local float tmp68[64] __attribute__((aligned(16)));
  local float tmp69[64] __attribute__((aligned(16)));
  local float tmp71[64] __attribute__((aligned(16)));
  local float tmp81[64] __attribute__((aligned(16)));
  local float tmp82[64] __attribute__((aligned(16)));
  local float tmp83[64] __attribute__((aligned(16)));
  local float tmp84[64] __attribute__((aligned(16)));
  local float tmp85[64] __attribute__((aligned(16)));
  local float tmp87[64] __attribute__((aligned(16)));
  local float tmp91[64] __attribute__((aligned(16)));
  local float tmp92[64] __attribute__((aligned(16)));
  local float tmp94[64] __attribute__((aligned(16)));
  local float tmp100[64] __attribute__((aligned(16)));
  local float tmp101[64] __attribute__((aligned(16)));
  local float tmp102[64] __attribute__((aligned(16)));
  local float tmp104[64] __attribute__((aligned(16)));
  local float tmp108[64] __attribute__((aligned(16)));
  local float tmp109[64] __attribute__((aligned(16)));
  local float tmp111[64] __attribute__((aligned(16)));
  local float tmp119[64] __attribute__((aligned(16)));
  local float tmp120[64] __attribute__((aligned(16)));
  local float tmp121[64] __attribute__((aligned(16)));
  local float tmp122[64] __attribute__((aligned(16)));
  local float tmp124[64] __attribute__((aligned(16)));
  local float tmp128[64] __attribute__((aligned(16)));
  local float tmp129[64] __attribute__((aligned(16)));
  local float tmp131[64] __attribute__((aligned(16)));
  local float tmp137[64] __attribute__((aligned(16)));
  local float tmp138[64] __attribute__((aligned(16)));
  local float tmp139[64] __attribute__((aligned(16)));
  local float tmp141[64] __attribute__((aligned(16)));
  local float tmp145[64] __attribute__((aligned(16)));
  local float tmp146[64] __attribute__((aligned(16)));
  local float tmp148[64] __attribute__((aligned(16)));
  local float tmp160[64] __attribute__((aligned(16)));
  local float tmp161[64] __attribute__((aligned(16)));
  local float tmp162[64] __attribute__((aligned(16)));
  local float tmp163[64] __attribute__((aligned(16)));
  local float tmp164[64] __attribute__((aligned(16)));
  local float tmp165[64] __attribute__((aligned(16)));
  local float tmp167[64] __attribute__((aligned(16)));
  local float tmp171[64] __attribute__((aligned(16)));
  local float tmp172[64] __attribute__((aligned(16)));
  local float tmp174[64] __attribute__((aligned(16)));
  local float tmp180[64] __attribute__((aligned(16)));
  local float tmp181[64] __attribute__((aligned(16)));
  local float tmp182[64] __attribute__((aligned(16)));
  local float tmp184[64] __attribute__((aligned(16)));
  local float tmp188[64] __attribute__((aligned(16)));
  local float tmp189[64] __attribute__((aligned(16)));
  local float tmp191[64] __attribute__((aligned(16)));
  local float tmp199[64] __attribute__((aligned(16)));
  local float tmp200[64] __attribute__((aligned(16)));
  local float tmp201[64] __attribute__((aligned(16)));
  local float tmp202[64] __attribute__((aligned(16)));
  local float tmp204[64] __attribute__((aligned(16)));
  local float tmp208[64] __attribute__((aligned(16)));
  local float tmp209[64] __attribute__((aligned(16)));
  local float tmp211[64] __attribute__((aligned(16)));
  local float tmp217[64] __attribute__((aligned(16)));
  local float tmp218[64] __attribute__((aligned(16)));
  local float tmp219[64] __attribute__((aligned(16)));
  local float tmp221[64] __attribute__((aligned(16)));
  local float tmp225[64] __attribute__((aligned(16)));
  local float tmp226[64] __attribute__((aligned(16)));
  local float tmp228[64] __attribute__((aligned(16)));
  local float tmp238[64] __attribute__((aligned(16)));
  local float tmp239[64] __attribute__((aligned(16)));
  local float tmp240[64] __attribute__((aligned(16)));
  local float tmp241[64] __attribute__((aligned(16)));
  local float tmp242[64] __attribute__((aligned(16)));
  local float tmp244[64] __attribute__((aligned(16)));
  local float tmp248[64] __attribute__((aligned(16)));
  local float tmp249[64] __attribute__((aligned(16)));
  local float tmp251[64] __attribute__((aligned(16)));
  local float tmp257[64] __attribute__((aligned(16)));
  local float tmp258[64] __attribute__((aligned(16)));
  local float tmp259[64] __attribute__((aligned(16)));
  local float tmp261[64] __attribute__((aligned(16)));
  local float tmp265[64] __attribute__((aligned(16)));
  local float tmp266[64] __attribute__((aligned(16)));
  local float tmp268[64] __attribute__((aligned(16)));
  local float tmp276[64] __attribute__((aligned(16)));
  local float tmp277[64] __attribute__((aligned(16)));
  local float tmp278[64] __attribute__((aligned(16)));
  local float tmp279[64] __attribute__((aligned(16)));
  local float tmp281[64] __attribute__((aligned(16)));
  local float tmp285[64] __attribute__((aligned(16)));
  local float tmp286[64] __attribute__((aligned(16)));
  local float tmp288[64] __attribute__((aligned(16)));
  local float tmp294[64] __attribute__((aligned(16)));
  local float tmp295[64] __attribute__((aligned(16)));
  local float tmp296[64] __attribute__((aligned(16)));
  local float tmp298[64] __attribute__((aligned(16)));
  local float tmp302[64] __attribute__((aligned(16)));
  local float tmp303[64] __attribute__((aligned(16)));
  local float tmp305[64] __attribute__((aligned(16)));
  for (int wg1 = get_group_id(0); wg1 < N / 64; wg1 += get_num_groups(0)) {
    for (int lid9 = get_local_id(0); lid9 < 64; lid9 += get_local_size(0)) {
      tmp8[lid9] = xs[64 * wg1 + lid9];
    }
    for (int lid11 = get_local_id(0); lid11 < 64; lid11 += get_local_size(0)) {
      tmp10[lid11] = xs[64 * wg1 + lid11];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid13 = get_local_id(0); lid13 < 64; lid13 += get_local_size(0)) {
      tmp7[lid13] = ((((lid13) % 2) == 0) ? (tmp8[lid13] + (((lid13 + 1) < (64)) ? tmp10[lid13 + 1] : 0.0f)) : tmp8[lid13]);
    }
    for (int lid16 = get_local_id(0); lid16 < 64; lid16 += get_local_size(0)) {
      tmp15[lid16] = xs[64 * wg1 + lid16];
    }
    for (int lid18 = get_local_id(0); lid18 < 64; lid18 += get_local_size(0)) {
      tmp17[lid18] = xs[64 * wg1 + lid18];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid20 = get_local_id(0); lid20 < 64; lid20 += get_local_size(0)) {
      tmp14[lid20] = ((((lid20) % 2) == 0) ? (tmp15[lid20] + (((lid20 + 1) < (64)) ? tmp17[lid20 + 1] : 0.0f)) : tmp15[lid20]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid22 = get_local_id(0); lid22 < 64; lid22 += get_local_size(0)) {
      tmp6[lid22] = ((((lid22) % 4) == 0) ? (tmp7[lid22] + (((lid22 + 2) < (64)) ? tmp14[lid22 + 2] : 0.0f)) : tmp7[lid22]);
    }
    for (int lid26 = get_local_id(0); lid26 < 64; lid26 += get_local_size(0)) {
      tmp25[lid26] = xs[64 * wg1 + lid26];
    }
    for (int lid28 = get_local_id(0); lid28 < 64; lid28 += get_local_size(0)) {
      tmp27[lid28] = xs[64 * wg1 + lid28];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid30 = get_local_id(0); lid30 < 64; lid30 += get_local_size(0)) {
      tmp24[lid30] = ((((lid30) % 2) == 0) ? (tmp25[lid30] + (((lid30 + 1) < (64)) ? tmp27[lid30 + 1] : 0.0f)) : tmp25[lid30]);
    }
    for (int lid33 = get_local_id(0); lid33 < 64; lid33 += get_local_size(0)) {
      tmp32[lid33] = xs[64 * wg1 + lid33];
    }
    for (int lid35 = get_local_id(0); lid35 < 64; lid35 += get_local_size(0)) {
      tmp34[lid35] = xs[64 * wg1 + lid35];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid37 = get_local_id(0); lid37 < 64; lid37 += get_local_size(0)) {
      tmp31[lid37] = ((((lid37) % 2) == 0) ? (tmp32[lid37] + (((lid37 + 1) < (64)) ? tmp34[lid37 + 1] : 0.0f)) : tmp32[lid37]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid39 = get_local_id(0); lid39 < 64; lid39 += get_local_size(0)) {
      tmp23[lid39] = ((((lid39) % 4) == 0) ? (tmp24[lid39] + (((lid39 + 2) < (64)) ? tmp31[lid39 + 2] : 0.0f)) : tmp24[lid39]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid41 = get_local_id(0); lid41 < 64; lid41 += get_local_size(0)) {
      tmp5[lid41] = ((((lid41) % 8) == 0) ? (tmp6[lid41] + (((lid41 + 4) < (64)) ? tmp23[lid41 + 4] : 0.0f)) : tmp6[lid41]);
    }
    for (int lid46 = get_local_id(0); lid46 < 64; lid46 += get_local_size(0)) {
      tmp45[lid46] = xs[64 * wg1 + lid46];
    }
    for (int lid48 = get_local_id(0); lid48 < 64; lid48 += get_local_size(0)) {
      tmp47[lid48] = xs[64 * wg1 + lid48];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid50 = get_local_id(0); lid50 < 64; lid50 += get_local_size(0)) {
      tmp44[lid50] = ((((lid50) % 2) == 0) ? (tmp45[lid50] + (((lid50 + 1) < (64)) ? tmp47[lid50 + 1] : 0.0f)) : tmp45[lid50]);
    }
    for (int lid53 = get_local_id(0); lid53 < 64; lid53 += get_local_size(0)) {
      tmp52[lid53] = xs[64 * wg1 + lid53];
    }
    for (int lid55 = get_local_id(0); lid55 < 64; lid55 += get_local_size(0)) {
      tmp54[lid55] = xs[64 * wg1 + lid55];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid57 = get_local_id(0); lid57 < 64; lid57 += get_local_size(0)) {
      tmp51[lid57] = ((((lid57) % 2) == 0) ? (tmp52[lid57] + (((lid57 + 1) < (64)) ? tmp54[lid57 + 1] : 0.0f)) : tmp52[lid57]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid59 = get_local_id(0); lid59 < 64; lid59 += get_local_size(0)) {
      tmp43[lid59] = ((((lid59) % 4) == 0) ? (tmp44[lid59] + (((lid59 + 2) < (64)) ? tmp51[lid59 + 2] : 0.0f)) : tmp44[lid59]);
    }
    for (int lid63 = get_local_id(0); lid63 < 64; lid63 += get_local_size(0)) {
      tmp62[lid63] = xs[64 * wg1 + lid63];
    }
    for (int lid65 = get_local_id(0); lid65 < 64; lid65 += get_local_size(0)) {
      tmp64[lid65] = xs[64 * wg1 + lid65];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid67 = get_local_id(0); lid67 < 64; lid67 += get_local_size(0)) {
      tmp61[lid67] = ((((lid67) % 2) == 0) ? (tmp62[lid67] + (((lid67 + 1) < (64)) ? tmp64[lid67 + 1] : 0.0f)) : tmp62[lid67]);
    }
    for (int lid70 = get_local_id(0); lid70 < 64; lid70 += get_local_size(0)) {
      tmp69[lid70] = xs[64 * wg1 + lid70];
    }
    for (int lid72 = get_local_id(0); lid72 < 64; lid72 += get_local_size(0)) {
      tmp71[lid72] = xs[64 * wg1 + lid72];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid74 = get_local_id(0); lid74 < 64; lid74 += get_local_size(0)) {
      tmp68[lid74] = ((((lid74) % 2) == 0) ? (tmp69[lid74] + (((lid74 + 1) < (64)) ? tmp71[lid74 + 1] : 0.0f)) : tmp69[lid74]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid76 = get_local_id(0); lid76 < 64; lid76 += get_local_size(0)) {
      tmp60[lid76] = ((((lid76) % 4) == 0) ? (tmp61[lid76] + (((lid76 + 2) < (64)) ? tmp68[lid76 + 2] : 0.0f)) : tmp61[lid76]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid78 = get_local_id(0); lid78 < 64; lid78 += get_local_size(0)) {
      tmp42[lid78] = ((((lid78) % 8) == 0) ? (tmp43[lid78] + (((lid78 + 4) < (64)) ? tmp60[lid78 + 4] : 0.0f)) : tmp43[lid78]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid80 = get_local_id(0); lid80 < 64; lid80 += get_local_size(0)) {
      tmp4[lid80] = ((((lid80) % 16) == 0) ? (tmp5[lid80] + (((lid80 + 8) < (64)) ? tmp42[lid80 + 8] : 0.0f)) : tmp5[lid80]);
    }
    for (int lid86 = get_local_id(0); lid86 < 64; lid86 += get_local_size(0)) {
      tmp85[lid86] = xs[64 * wg1 + lid86];
    }
    for (int lid88 = get_local_id(0); lid88 < 64; lid88 += get_local_size(0)) {
      tmp87[lid88] = xs[64 * wg1 + lid88];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid90 = get_local_id(0); lid90 < 64; lid90 += get_local_size(0)) {
      tmp84[lid90] = ((((lid90) % 2) == 0) ? (tmp85[lid90] + (((lid90 + 1) < (64)) ? tmp87[lid90 + 1] : 0.0f)) : tmp85[lid90]);
    }
    for (int lid93 = get_local_id(0); lid93 < 64; lid93 += get_local_size(0)) {
      tmp92[lid93] = xs[64 * wg1 + lid93];
    }
    for (int lid95 = get_local_id(0); lid95 < 64; lid95 += get_local_size(0)) {
      tmp94[lid95] = xs[64 * wg1 + lid95];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid97 = get_local_id(0); lid97 < 64; lid97 += get_local_size(0)) {
      tmp91[lid97] = ((((lid97) % 2) == 0) ? (tmp92[lid97] + (((lid97 + 1) < (64)) ? tmp94[lid97 + 1] : 0.0f)) : tmp92[lid97]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid99 = get_local_id(0); lid99 < 64; lid99 += get_local_size(0)) {
      tmp83[lid99] = ((((lid99) % 4) == 0) ? (tmp84[lid99] + (((lid99 + 2) < (64)) ? tmp91[lid99 + 2] : 0.0f)) : tmp84[lid99]);
    }
    for (int lid103 = get_local_id(0); lid103 < 64; lid103 += get_local_size(0)) {
      tmp102[lid103] = xs[64 * wg1 + lid103];
    }
    for (int lid105 = get_local_id(0); lid105 < 64; lid105 += get_local_size(0)) {
      tmp104[lid105] = xs[64 * wg1 + lid105];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid107 = get_local_id(0); lid107 < 64; lid107 += get_local_size(0)) {
      tmp101[lid107] = ((((lid107) % 2) == 0) ? (tmp102[lid107] + (((lid107 + 1) < (64)) ? tmp104[lid107 + 1] : 0.0f)) : tmp102[lid107]);
    }
    for (int lid110 = get_local_id(0); lid110 < 64; lid110 += get_local_size(0)) {
      tmp109[lid110] = xs[64 * wg1 + lid110];
    }
    for (int lid112 = get_local_id(0); lid112 < 64; lid112 += get_local_size(0)) {
      tmp111[lid112] = xs[64 * wg1 + lid112];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid114 = get_local_id(0); lid114 < 64; lid114 += get_local_size(0)) {
      tmp108[lid114] = ((((lid114) % 2) == 0) ? (tmp109[lid114] + (((lid114 + 1) < (64)) ? tmp111[lid114 + 1] : 0.0f)) : tmp109[lid114]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid116 = get_local_id(0); lid116 < 64; lid116 += get_local_size(0)) {
      tmp100[lid116] = ((((lid116) % 4) == 0) ? (tmp101[lid116] + (((lid116 + 2) < (64)) ? tmp108[lid116 + 2] : 0.0f)) : tmp101[lid116]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid118 = get_local_id(0); lid118 < 64; lid118 += get_local_size(0)) {
      tmp82[lid118] = ((((lid118) % 8) == 0) ? (tmp83[lid118] + (((lid118 + 4) < (64)) ? tmp100[lid118 + 4] : 0.0f)) : tmp83[lid118]);
    }
    for (int lid123 = get_local_id(0); lid123 < 64; lid123 += get_local_size(0)) {
      tmp122[lid123] = xs[64 * wg1 + lid123];
    }
    for (int lid125 = get_local_id(0); lid125 < 64; lid125 += get_local_size(0)) {
      tmp124[lid125] = xs[64 * wg1 + lid125];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid127 = get_local_id(0); lid127 < 64; lid127 += get_local_size(0)) {
      tmp121[lid127] = ((((lid127) % 2) == 0) ? (tmp122[lid127] + (((lid127 + 1) < (64)) ? tmp124[lid127 + 1] : 0.0f)) : tmp122[lid127]);
    }
    for (int lid130 = get_local_id(0); lid130 < 64; lid130 += get_local_size(0)) {
      tmp129[lid130] = xs[64 * wg1 + lid130];
    }
    for (int lid132 = get_local_id(0); lid132 < 64; lid132 += get_local_size(0)) {
      tmp131[lid132] = xs[64 * wg1 + lid132];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid134 = get_local_id(0); lid134 < 64; lid134 += get_local_size(0)) {
      tmp128[lid134] = ((((lid134) % 2) == 0) ? (tmp129[lid134] + (((lid134 + 1) < (64)) ? tmp131[lid134 + 1] : 0.0f)) : tmp129[lid134]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid136 = get_local_id(0); lid136 < 64; lid136 += get_local_size(0)) {
      tmp120[lid136] = ((((lid136) % 4) == 0) ? (tmp121[lid136] + (((lid136 + 2) < (64)) ? tmp128[lid136 + 2] : 0.0f)) : tmp121[lid136]);
    }
    for (int lid140 = get_local_id(0); lid140 < 64; lid140 += get_local_size(0)) {
      tmp139[lid140] = xs[64 * wg1 + lid140];
    }
    for (int lid142 = get_local_id(0); lid142 < 64; lid142 += get_local_size(0)) {
      tmp141[lid142] = xs[64 * wg1 + lid142];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid144 = get_local_id(0); lid144 < 64; lid144 += get_local_size(0)) {
      tmp138[lid144] = ((((lid144) % 2) == 0) ? (tmp139[lid144] + (((lid144 + 1) < (64)) ? tmp141[lid144 + 1] : 0.0f)) : tmp139[lid144]);
    }
    for (int lid147 = get_local_id(0); lid147 < 64; lid147 += get_local_size(0)) {
      tmp146[lid147] = xs[64 * wg1 + lid147];
    }
    for (int lid149 = get_local_id(0); lid149 < 64; lid149 += get_local_size(0)) {
      tmp148[lid149] = xs[64 * wg1 + lid149];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid151 = get_local_id(0); lid151 < 64; lid151 += get_local_size(0)) {
      tmp145[lid151] = ((((lid151) % 2) == 0) ? (tmp146[lid151] + (((lid151 + 1) < (64)) ? tmp148[lid151 + 1] : 0.0f)) : tmp146[lid151]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid153 = get_local_id(0); lid153 < 64; lid153 += get_local_size(0)) {
      tmp137[lid153] = ((((lid153) % 4) == 0) ? (tmp138[lid153] + (((lid153 + 2) < (64)) ? tmp145[lid153 + 2] : 0.0f)) : tmp138[lid153]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid155 = get_local_id(0); lid155 < 64; lid155 += get_local_size(0)) {
      tmp119[lid155] = ((((lid155) % 8) == 0) ? (tmp120[lid155] + (((lid155 + 4) < (64)) ? tmp137[lid155 + 4] : 0.0f)) : tmp120[lid155]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid157 = get_local_id(0); lid157 < 64; lid157 += get_local_size(0)) {
      tmp81[lid157] = ((((lid157) % 16) == 0) ? (tmp82[lid157] + (((lid157 + 8) < (64)) ? tmp119[lid157 + 8] : 0.0f)) : tmp82[lid157]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid159 = get_local_id(0); lid159 < 64; lid159 += get_local_size(0)) {
      tmp3[lid159] = ((((lid159) % 32) == 0) ? (tmp4[lid159] + (((lid159 + 16) < (64)) ? tmp81[lid159 + 16] : 0.0f)) : tmp4[lid159]);
    }
    for (int lid166 = get_local_id(0); lid166 < 64; lid166 += get_local_size(0)) {
      tmp165[lid166] = xs[64 * wg1 + lid166];
    }
    for (int lid168 = get_local_id(0); lid168 < 64; lid168 += get_local_size(0)) {
      tmp167[lid168] = xs[64 * wg1 + lid168];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid170 = get_local_id(0); lid170 < 64; lid170 += get_local_size(0)) {
      tmp164[lid170] = ((((lid170) % 2) == 0) ? (tmp165[lid170] + (((lid170 + 1) < (64)) ? tmp167[lid170 + 1] : 0.0f)) : tmp165[lid170]);
    }
    for (int lid173 = get_local_id(0); lid173 < 64; lid173 += get_local_size(0)) {
      tmp172[lid173] = xs[64 * wg1 + lid173];
    }
    for (int lid175 = get_local_id(0); lid175 < 64; lid175 += get_local_size(0)) {
      tmp174[lid175] = xs[64 * wg1 + lid175];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid177 = get_local_id(0); lid177 < 64; lid177 += get_local_size(0)) {
      tmp171[lid177] = ((((lid177) % 2) == 0) ? (tmp172[lid177] + (((lid177 + 1) < (64)) ? tmp174[lid177 + 1] : 0.0f)) : tmp172[lid177]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid179 = get_local_id(0); lid179 < 64; lid179 += get_local_size(0)) {
      tmp163[lid179] = ((((lid179) % 4) == 0) ? (tmp164[lid179] + (((lid179 + 2) < (64)) ? tmp171[lid179 + 2] : 0.0f)) : tmp164[lid179]);
    }
    for (int lid183 = get_local_id(0); lid183 < 64; lid183 += get_local_size(0)) {
      tmp182[lid183] = xs[64 * wg1 + lid183];
    }
    for (int lid185 = get_local_id(0); lid185 < 64; lid185 += get_local_size(0)) {
      tmp184[lid185] = xs[64 * wg1 + lid185];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid187 = get_local_id(0); lid187 < 64; lid187 += get_local_size(0)) {
      tmp181[lid187] = ((((lid187) % 2) == 0) ? (tmp182[lid187] + (((lid187 + 1) < (64)) ? tmp184[lid187 + 1] : 0.0f)) : tmp182[lid187]);
    }
    for (int lid190 = get_local_id(0); lid190 < 64; lid190 += get_local_size(0)) {
      tmp189[lid190] = xs[64 * wg1 + lid190];
    }
    for (int lid192 = get_local_id(0); lid192 < 64; lid192 += get_local_size(0)) {
      tmp191[lid192] = xs[64 * wg1 + lid192];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid194 = get_local_id(0); lid194 < 64; lid194 += get_local_size(0)) {
      tmp188[lid194] = ((((lid194) % 2) == 0) ? (tmp189[lid194] + (((lid194 + 1) < (64)) ? tmp191[lid194 + 1] : 0.0f)) : tmp189[lid194]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid196 = get_local_id(0); lid196 < 64; lid196 += get_local_size(0)) {
      tmp180[lid196] = ((((lid196) % 4) == 0) ? (tmp181[lid196] + (((lid196 + 2) < (64)) ? tmp188[lid196 + 2] : 0.0f)) : tmp181[lid196]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid198 = get_local_id(0); lid198 < 64; lid198 += get_local_size(0)) {
      tmp162[lid198] = ((((lid198) % 8) == 0) ? (tmp163[lid198] + (((lid198 + 4) < (64)) ? tmp180[lid198 + 4] : 0.0f)) : tmp163[lid198]);
    }
    for (int lid203 = get_local_id(0); lid203 < 64; lid203 += get_local_size(0)) {
      tmp202[lid203] = xs[64 * wg1 + lid203];
    }
    for (int lid205 = get_local_id(0); lid205 < 64; lid205 += get_local_size(0)) {
      tmp204[lid205] = xs[64 * wg1 + lid205];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid207 = get_local_id(0); lid207 < 64; lid207 += get_local_size(0)) {
      tmp201[lid207] = ((((lid207) % 2) == 0) ? (tmp202[lid207] + (((lid207 + 1) < (64)) ? tmp204[lid207 + 1] : 0.0f)) : tmp202[lid207]);
    }
    for (int lid210 = get_local_id(0); lid210 < 64; lid210 += get_local_size(0)) {
      tmp209[lid210] = xs[64 * wg1 + lid210];
    }
    for (int lid212 = get_local_id(0); lid212 < 64; lid212 += get_local_size(0)) {
      tmp211[lid212] = xs[64 * wg1 + lid212];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid214 = get_local_id(0); lid214 < 64; lid214 += get_local_size(0)) {
      tmp208[lid214] = ((((lid214) % 2) == 0) ? (tmp209[lid214] + (((lid214 + 1) < (64)) ? tmp211[lid214 + 1] : 0.0f)) : tmp209[lid214]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid216 = get_local_id(0); lid216 < 64; lid216 += get_local_size(0)) {
      tmp200[lid216] = ((((lid216) % 4) == 0) ? (tmp201[lid216] + (((lid216 + 2) < (64)) ? tmp208[lid216 + 2] : 0.0f)) : tmp201[lid216]);
    }
    for (int lid220 = get_local_id(0); lid220 < 64; lid220 += get_local_size(0)) {
      tmp219[lid220] = xs[64 * wg1 + lid220];
    }
    for (int lid222 = get_local_id(0); lid222 < 64; lid222 += get_local_size(0)) {
      tmp221[lid222] = xs[64 * wg1 + lid222];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid224 = get_local_id(0); lid224 < 64; lid224 += get_local_size(0)) {
      tmp218[lid224] = ((((lid224) % 2) == 0) ? (tmp219[lid224] + (((lid224 + 1) < (64)) ? tmp221[lid224 + 1] : 0.0f)) : tmp219[lid224]);
    }
    for (int lid227 = get_local_id(0); lid227 < 64; lid227 += get_local_size(0)) {
      tmp226[lid227] = xs[64 * wg1 + lid227];
    }
    for (int lid229 = get_local_id(0); lid229 < 64; lid229 += get_local_size(0)) {
      tmp228[lid229] = xs[64 * wg1 + lid229];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid231 = get_local_id(0); lid231 < 64; lid231 += get_local_size(0)) {
      tmp225[lid231] = ((((lid231) % 2) == 0) ? (tmp226[lid231] + (((lid231 + 1) < (64)) ? tmp228[lid231 + 1] : 0.0f)) : tmp226[lid231]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid233 = get_local_id(0); lid233 < 64; lid233 += get_local_size(0)) {
      tmp217[lid233] = ((((lid233) % 4) == 0) ? (tmp218[lid233] + (((lid233 + 2) < (64)) ? tmp225[lid233 + 2] : 0.0f)) : tmp218[lid233]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid235 = get_local_id(0); lid235 < 64; lid235 += get_local_size(0)) {
      tmp199[lid235] = ((((lid235) % 8) == 0) ? (tmp200[lid235] + (((lid235 + 4) < (64)) ? tmp217[lid235 + 4] : 0.0f)) : tmp200[lid235]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid237 = get_local_id(0); lid237 < 64; lid237 += get_local_size(0)) {
      tmp161[lid237] = ((((lid237) % 16) == 0) ? (tmp162[lid237] + (((lid237 + 8) < (64)) ? tmp199[lid237 + 8] : 0.0f)) : tmp162[lid237]);
    }
    for (int lid243 = get_local_id(0); lid243 < 64; lid243 += get_local_size(0)) {
      tmp242[lid243] = xs[64 * wg1 + lid243];
    }
    for (int lid245 = get_local_id(0); lid245 < 64; lid245 += get_local_size(0)) {
      tmp244[lid245] = xs[64 * wg1 + lid245];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid247 = get_local_id(0); lid247 < 64; lid247 += get_local_size(0)) {
      tmp241[lid247] = ((((lid247) % 2) == 0) ? (tmp242[lid247] + (((lid247 + 1) < (64)) ? tmp244[lid247 + 1] : 0.0f)) : tmp242[lid247]);
    }
    for (int lid250 = get_local_id(0); lid250 < 64; lid250 += get_local_size(0)) {
      tmp249[lid250] = xs[64 * wg1 + lid250];
    }
    for (int lid252 = get_local_id(0); lid252 < 64; lid252 += get_local_size(0)) {
      tmp251[lid252] = xs[64 * wg1 + lid252];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid254 = get_local_id(0); lid254 < 64; lid254 += get_local_size(0)) {
      tmp248[lid254] = ((((lid254) % 2) == 0) ? (tmp249[lid254] + (((lid254 + 1) < (64)) ? tmp251[lid254 + 1] : 0.0f)) : tmp249[lid254]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid256 = get_local_id(0); lid256 < 64; lid256 += get_local_size(0)) {
      tmp240[lid256] = ((((lid256) % 4) == 0) ? (tmp241[lid256] + (((lid256 + 2) < (64)) ? tmp248[lid256 + 2] : 0.0f)) : tmp241[lid256]);
    }
    for (int lid260 = get_local_id(0); lid260 < 64; lid260 += get_local_size(0)) {
      tmp259[lid260] = xs[64 * wg1 + lid260];
    }
    for (int lid262 = get_local_id(0); lid262 < 64; lid262 += get_local_size(0)) {
      tmp261[lid262] = xs[64 * wg1 + lid262];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid264 = get_local_id(0); lid264 < 64; lid264 += get_local_size(0)) {
      tmp258[lid264] = ((((lid264) % 2) == 0) ? (tmp259[lid264] + (((lid264 + 1) < (64)) ? tmp261[lid264 + 1] : 0.0f)) : tmp259[lid264]);
    }
    for (int lid267 = get_local_id(0); lid267 < 64; lid267 += get_local_size(0)) {
      tmp266[lid267] = xs[64 * wg1 + lid267];
    }
    for (int lid269 = get_local_id(0); lid269 < 64; lid269 += get_local_size(0)) {
      tmp268[lid269] = xs[64 * wg1 + lid269];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid271 = get_local_id(0); lid271 < 64; lid271 += get_local_size(0)) {
      tmp265[lid271] = ((((lid271) % 2) == 0) ? (tmp266[lid271] + (((lid271 + 1) < (64)) ? tmp268[lid271 + 1] : 0.0f)) : tmp266[lid271]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid273 = get_local_id(0); lid273 < 64; lid273 += get_local_size(0)) {
      tmp257[lid273] = ((((lid273) % 4) == 0) ? (tmp258[lid273] + (((lid273 + 2) < (64)) ? tmp265[lid273 + 2] : 0.0f)) : tmp258[lid273]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid275 = get_local_id(0); lid275 < 64; lid275 += get_local_size(0)) {
      tmp239[lid275] = ((((lid275) % 8) == 0) ? (tmp240[lid275] + (((lid275 + 4) < (64)) ? tmp257[lid275 + 4] : 0.0f)) : tmp240[lid275]);
    }
    for (int lid280 = get_local_id(0); lid280 < 64; lid280 += get_local_size(0)) {
      tmp279[lid280] = xs[64 * wg1 + lid280];
    }
    for (int lid282 = get_local_id(0); lid282 < 64; lid282 += get_local_size(0)) {
      tmp281[lid282] = xs[64 * wg1 + lid282];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid284 = get_local_id(0); lid284 < 64; lid284 += get_local_size(0)) {
      tmp278[lid284] = ((((lid284) % 2) == 0) ? (tmp279[lid284] + (((lid284 + 1) < (64)) ? tmp281[lid284 + 1] : 0.0f)) : tmp279[lid284]);
    }
    for (int lid287 = get_local_id(0); lid287 < 64; lid287 += get_local_size(0)) {
      tmp286[lid287] = xs[64 * wg1 + lid287];
    }
    for (int lid289 = get_local_id(0); lid289 < 64; lid289 += get_local_size(0)) {
      tmp288[lid289] = xs[64 * wg1 + lid289];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid291 = get_local_id(0); lid291 < 64; lid291 += get_local_size(0)) {
      tmp285[lid291] = ((((lid291) % 2) == 0) ? (tmp286[lid291] + (((lid291 + 1) < (64)) ? tmp288[lid291 + 1] : 0.0f)) : tmp286[lid291]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid293 = get_local_id(0); lid293 < 64; lid293 += get_local_size(0)) {
      tmp277[lid293] = ((((lid293) % 4) == 0) ? (tmp278[lid293] + (((lid293 + 2) < (64)) ? tmp285[lid293 + 2] : 0.0f)) : tmp278[lid293]);
    }
    for (int lid297 = get_local_id(0); lid297 < 64; lid297 += get_local_size(0)) {
      tmp296[lid297] = xs[64 * wg1 + lid297];
    }
    for (int lid299 = get_local_id(0); lid299 < 64; lid299 += get_local_size(0)) {
      tmp298[lid299] = xs[64 * wg1 + lid299];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid301 = get_local_id(0); lid301 < 64; lid301 += get_local_size(0)) {
      tmp295[lid301] = ((((lid301) % 2) == 0) ? (tmp296[lid301] + (((lid301 + 1) < (64)) ? tmp298[lid301 + 1] : 0.0f)) : tmp296[lid301]);
    }
    for (int lid304 = get_local_id(0); lid304 < 64; lid304 += get_local_size(0)) {
      tmp303[lid304] = xs[64 * wg1 + lid304];
    }
    for (int lid306 = get_local_id(0); lid306 < 64; lid306 += get_local_size(0)) {
      tmp305[lid306] = xs[64 * wg1 + lid306];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid308 = get_local_id(0); lid308 < 64; lid308 += get_local_size(0)) {
      tmp302[lid308] = ((((lid308) % 2) == 0) ? (tmp303[lid308] + (((lid308 + 1) < (64)) ? tmp305[lid308 + 1] : 0.0f)) : tmp303[lid308]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid310 = get_local_id(0); lid310 < 64; lid310 += get_local_size(0)) {
      tmp294[lid310] = ((((lid310) % 4) == 0) ? (tmp295[lid310] + (((lid310 + 2) < (64)) ? tmp302[lid310 + 2] : 0.0f)) : tmp295[lid310]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid312 = get_local_id(0); lid312 < 64; lid312 += get_local_size(0)) {
      tmp276[lid312] = ((((lid312) % 8) == 0) ? (tmp277[lid312] + (((lid312 + 4) < (64)) ? tmp294[lid312 + 4] : 0.0f)) : tmp277[lid312]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid314 = get_local_id(0); lid314 < 64; lid314 += get_local_size(0)) {
      tmp238[lid314] = ((((lid314) % 16) == 0) ? (tmp239[lid314] + (((lid314 + 8) < (64)) ? tmp276[lid314 + 8] : 0.0f)) : tmp239[lid314]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid316 = get_local_id(0); lid316 < 64; lid316 += get_local_size(0)) {
      tmp160[lid316] = ((((lid316) % 32) == 0) ? (tmp161[lid316] + (((lid316 + 16) < (64)) ? tmp238[lid316 + 16] : 0.0f)) : tmp161[lid316]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid318 = get_local_id(0); lid318 < 64; lid318 += get_local_size(0)) {
      tmp2[lid318] = ((((lid318) % 64) == 0) ? (tmp3[lid318] + (((lid318 + 32) < (64)) ? tmp160[lid318 + 32] : 0.0f)) : tmp3[lid318]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lid319 = get_local_id(0); lid319 < 1; lid319 += get_local_size(0)) {
      output[wg1 + lid319] = tmp2[lid319];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}
