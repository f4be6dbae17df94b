__attribute__((reqd_work_group_size(64, 1, 1)))
kernel void seed_reduction_v1(
    global const float* restrict xs,
    global float* restrict output,
    const int N) {
  local float tmp2[64] __attribute__((aligned(16)));
  local float tmp10[64] __attribute__((aligned(16)));
  local float tmp14[64] __attribute__((aligned(16)));
  local float tmp17[64] __attribute__((aligned(16)));
  local float tmp23[64] __attribute__((aligned(16)));
  local float tmp27[64] __attribute__((aligned(16)));
  local float tmp31[64] __attribute__((aligned(16)));
  local float tmp34[64] __attribute__((aligned(16)));
  local float tmp42[64] __attribute__((aligned(16)));
  local float tmp47[64] __attribute__((aligned(16)));
  local float tmp51[64] __attribute__((aligned(16)));
  local float tmp54[64] __attribute__((aligned(16)));
  local float tmp60[64] __attribute__((aligned(16)));
  local float tmp64[64] __attribute__((aligned(16)));
  local float tmp68[64] __attribute__((aligned(16)));
  local float tmp71[64] __attribute__((aligned(16)));
  local float tmp81[64] __attribute__((aligned(16)));
  local float tmp87[64] __attribute__((aligned(16)));
  local float tmp91[64] __attribute__((aligned(16)));
  local float tmp94[64] __attribute__((aligned(16)));
  local float tmp100[64] __attribute__((aligned(16)));
  local float tmp104[64] __attribute__((aligned(16)));
  local float tmp108[64] __attribute__((aligned(16)));
  local float tmp111[64] __attribute__((aligned(16)));
  local float tmp119[64] __attribute__((aligned(16)));
  local float tmp124[64] __attribute__((aligned(16)));
  local float tmp128[64] __attribute__((aligned(16)));
  local float tmp131[64] __attribute__((aligned(16)));
  local float tmp137[64] __attribute__((aligned(16)));
  local float tmp141[64] __attribute__((aligned(16)));
  local float tmp145[64] __attribute__((aligned(16)));
  local float tmp148[64] __attribute__((aligned(16)));
  local float tmp160[64] __attribute__((aligned(16)));
  local float tmp167[64] __attribute__((aligned(16)));
  local float tmp171[64] __attribute__((aligned(16)));
  local float tmp174[64] __attribute__((aligned(16)));
  local float tmp180[64] __attribute__((aligned(16)));
  local float tmp184[64] __attribute__((aligned(16)));
  local float tmp188[64] __attribute__((aligned(16)));
  local float tmp191[64] __attribute__((aligned(16)));
  local float tmp199[64] __attribute__((aligned(16)));
  local float tmp204[64] __attribute__((aligned(16)));
  local float tmp208[64] __attribute__((aligned(16)));
  local float tmp211[64] __attribute__((aligned(16)));
  local float tmp217[64] __attribute__((aligned(16)));
  local float tmp221[64] __attribute__((aligned(16)));
  local float tmp225[64] __attribute__((aligned(16)));
  local float tmp228[64] __attribute__((aligned(16)));
  local float tmp238[64] __attribute__((aligned(16)));
  local float tmp244[64] __attribute__((aligned(16)));
  local float tmp248[64] __attribute__((aligned(16)));
  local float tmp251[64] __attribute__((aligned(16)));
  local float tmp257[64] __attribute__((aligned(16)));
  local float tmp261[64] __attribute__((aligned(16)));
  local float tmp265[64] __attribute__((aligned(16)));
  local float tmp268[64] __attribute__((aligned(16)));
  local float tmp276[64] __attribute__((aligned(16)));
  local float tmp281[64] __attribute__((aligned(16)));
  local float tmp285[64] __attribute__((aligned(16)));
  local float tmp288[64] __attribute__((aligned(16)));
  local float tmp294[64] __attribute__((aligned(16)));
  local float tmp298[64] __attribute__((aligned(16)));
  local float tmp302[64] __attribute__((aligned(16)));
  local float tmp305[64] __attribute__((aligned(16)));
  {
    const int wg1 = get_group_id(0);
    if (wg1 < N / 64) {
      {
        float tmp3;
        {
          float tmp4;
          {
            float tmp5;
            {
              float tmp6;
              {
                float tmp7;
                {
                  float tmp8;
                  {
                    const int lid9 = get_local_id(0);
                    tmp8 = xs[64 * wg1 + lid9];
                  }
                  {
                    const int lid11 = get_local_id(0);
                    tmp10[lid11] = xs[64 * wg1 + lid11];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid13 = get_local_id(0);
                    tmp7 = ((((lid13) % 2) == 0) ? (tmp8 + (((lid13 + 1) < (64)) ? tmp10[lid13 + 1] : 0.0f)) : tmp8);
                  }
                }
                {
                  float tmp15;
                  {
                    const int lid16 = get_local_id(0);
                    tmp15 = xs[64 * wg1 + lid16];
                  }
                  {
                    const int lid18 = get_local_id(0);
                    tmp17[lid18] = xs[64 * wg1 + lid18];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid20 = get_local_id(0);
                    tmp14[lid20] = ((((lid20) % 2) == 0) ? (tmp15 + (((lid20 + 1) < (64)) ? tmp17[lid20 + 1] : 0.0f)) : tmp15);
                  }
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                {
                  const int lid22 = get_local_id(0);
                  tmp6 = ((((lid22) % 4) == 0) ? (tmp7 + (((lid22 + 2) < (64)) ? tmp14[lid22 + 2] : 0.0f)) : tmp7);
                }
              }
              {
                float tmp24;
                {
                  float tmp25;
                  {
                    const int lid26 = get_local_id(0);
                    tmp25 = xs[64 * wg1 + lid26];
                  }
                  {
                    const int lid28 = get_local_id(0);
                    tmp27[lid28] = xs[64 * wg1 + lid28];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid30 = get_local_id(0);
                    tmp24 = ((((lid30) % 2) == 0) ? (tmp25 + (((lid30 + 1) < (64)) ? tmp27[lid30 + 1] : 0.0f)) : tmp25);
                  }
                }
                {
                  float tmp32;
                  {
                    const int lid33 = get_local_id(0);
                    tmp32 = xs[64 * wg1 + lid33];
                  }
                  {
                    const int lid35 = get_local_id(0);
                    tmp34[lid35] = xs[64 * wg1 + lid35];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid37 = get_local_id(0);
                    tmp31[lid37] = ((((lid37) % 2) == 0) ? (tmp32 + (((lid37 + 1) < (64)) ? tmp34[lid37 + 1] : 0.0f)) : tmp32);
                  }
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                {
                  const int lid39 = get_local_id(0);
                  tmp23[lid39] = ((((lid39) % 4) == 0) ? (tmp24 + (((lid39 + 2) < (64)) ? tmp31[lid39 + 2] : 0.0f)) : tmp24);
                }
              }
              barrier(CLK_LOCAL_MEM_FENCE);
              {
                const int lid41 = get_local_id(0);
                tmp5 = ((((lid41) % 8) == 0) ? (tmp6 + (((lid41 + 4) < (64)) ? tmp23[lid41 + 4] : 0.0f)) : tmp6);
              }
            }
            {
              float tmp43;
              {
                float tmp44;
                {
                  float tmp45;
                  {
                    const int lid46 = get_local_id(0);
                    tmp45 = xs[64 * wg1 + lid46];
                  }
                  {
                    const int lid48 = get_local_id(0);
                    tmp47[lid48] = xs[64 * wg1 + lid48];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid50 = get_local_id(0);
                    tmp44 = ((((lid50) % 2) == 0) ? (tmp45 + (((lid50 + 1) < (64)) ? tmp47[lid50 + 1] : 0.0f)) : tmp45);
                  }
                }
                {
                  float tmp52;
                  {
                    const int lid53 = get_local_id(0);
                    tmp52 = xs[64 * wg1 + lid53];
                  }
                  {
                    const int lid55 = get_local_id(0);
                    tmp54[lid55] = xs[64 * wg1 + lid55];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid57 = get_local_id(0);
                    tmp51[lid57] = ((((lid57) % 2) == 0) ? (tmp52 + (((lid57 + 1) < (64)) ? tmp54[lid57 + 1] : 0.0f)) : tmp52);
                  }
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                {
                  const int lid59 = get_local_id(0);
                  tmp43 = ((((lid59) % 4) == 0) ? (tmp44 + (((lid59 + 2) < (64)) ? tmp51[lid59 + 2] : 0.0f)) : tmp44);
                }
              }
              {
                float tmp61;
                {
                  float tmp62;
                  {
                    const int lid63 = get_local_id(0);
                    tmp62 = xs[64 * wg1 + lid63];
                  }
                  {
                    const int lid65 = get_local_id(0);
                    tmp64[lid65] = xs[64 * wg1 + lid65];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid67 = get_local_id(0);
                    tmp61 = ((((lid67) % 2) == 0) ? (tmp62 + (((lid67 + 1) < (64)) ? tmp64[lid67 + 1] : 0.0f)) : tmp62);
                  }
                }
                {
                  float tmp69;
                  {
                    const int lid70 = get_local_id(0);
                    tmp69 = xs[64 * wg1 + lid70];
                  }
                  {
                    const int lid72 = get_local_id(0);
                    tmp71[lid72] = xs[64 * wg1 + lid72];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid74 = get_local_id(0);
                    tmp68[lid74] = ((((lid74) % 2) == 0) ? (tmp69 + (((lid74 + 1) < (64)) ? tmp71[lid74 + 1] : 0.0f)) : tmp69);
                  }
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                {
                  const int lid76 = get_local_id(0);
                  tmp60[lid76] = ((((lid76) % 4) == 0) ? (tmp61 + (((lid76 + 2) < (64)) ? tmp68[lid76 + 2] : 0.0f)) : tmp61);
                }
              }
              barrier(CLK_LOCAL_MEM_FENCE);
              {
                const int lid78 = get_local_id(0);
                tmp42[lid78] = ((((lid78) % 8) == 0) ? (tmp43 + (((lid78 + 4) < (64)) ? tmp60[lid78 + 4] : 0.0f)) : tmp43);
              }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            {
              const int lid80 = get_local_id(0);
              tmp4 = ((((lid80) % 16) == 0) ? (tmp5 + (((lid80 + 8) < (64)) ? tmp42[lid80 + 8] : 0.0f)) : tmp5);
            }
          }
          {
            float tmp82;
            {
              float tmp83;
              {
                float tmp84;
                {
                  float tmp85;
                  {
                    const int lid86 = get_local_id(0);
                    tmp85 = xs[64 * wg1 + lid86];
                  }
                  {
                    const int lid88 = get_local_id(0);
                    tmp87[lid88] = xs[64 * wg1 + lid88];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid90 = get_local_id(0);
                    tmp84 = ((((lid90) % 2) == 0) ? (tmp85 + (((lid90 + 1) < (64)) ? tmp87[lid90 + 1] : 0.0f)) : tmp85);
                  }
                }
                {
                  float tmp92;
                  {
                    const int lid93 = get_local_id(0);
                    tmp92 = xs[64 * wg1 + lid93];
                  }
                  {
                    const int lid95 = get_local_id(0);
                    tmp94[lid95] = xs[64 * wg1 + lid95];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid97 = get_local_id(0);
                    tmp91[lid97] = ((((lid97) % 2) == 0) ? (tmp92 + (((lid97 + 1) < (64)) ? tmp94[lid97 + 1] : 0.0f)) : tmp92);
                  }
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                {
                  const int lid99 = get_local_id(0);
                  tmp83 = ((((lid99) % 4) == 0) ? (tmp84 + (((lid99 + 2) < (64)) ? tmp91[lid99 + 2] : 0.0f)) : tmp84);
                }
              }
              {
                float tmp101;
                {
                  float tmp102;
                  {
                    const int lid103 = get_local_id(0);
                    tmp102 = xs[64 * wg1 + lid103];
                  }
                  {
                    const int lid105 = get_local_id(0);
                    tmp104[lid105] = xs[64 * wg1 + lid105];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid107 = get_local_id(0);
                    tmp101 = ((((lid107) % 2) == 0) ? (tmp102 + (((lid107 + 1) < (64)) ? tmp104[lid107 + 1] : 0.0f)) : tmp102);
                  }
                }
                {
                  float tmp109;
                  {
                    const int lid110 = get_local_id(0);
                    tmp109 = xs[64 * wg1 + lid110];
                  }
                  {
                    const int lid112 = get_local_id(0);
                    tmp111[lid112] = xs[64 * wg1 + lid112];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid114 = get_local_id(0);
                    tmp108[lid114] = ((((lid114) % 2) == 0) ? (tmp109 + (((lid114 + 1) < (64)) ? tmp111[lid114 + 1] : 0.0f)) : tmp109);
                  }
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                {
                  const int lid116 = get_local_id(0);
                  tmp100[lid116] = ((((lid116) % 4) == 0) ? (tmp101 + (((lid116 + 2) < (64)) ? tmp108[lid116 + 2] : 0.0f)) : tmp101);
                }
              }
              barrier(CLK_LOCAL_MEM_FENCE);
              {
                const int lid118 = get_local_id(0);
                tmp82 = ((((lid118) % 8) == 0) ? (tmp83 + (((lid118 + 4) < (64)) ? tmp100[lid118 + 4] : 0.0f)) : tmp83);
              }
            }
            {
              float tmp120;
              {
                float tmp121;
                {
                  float tmp122;
                  {
                    const int lid123 = get_local_id(0);
                    tmp122 = xs[64 * wg1 + lid123];
                  }
                  {
                    const int lid125 = get_local_id(0);
                    tmp124[lid125] = xs[64 * wg1 + lid125];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid127 = get_local_id(0);
                    tmp121 = ((((lid127) % 2) == 0) ? (tmp122 + (((lid127 + 1) < (64)) ? tmp124[lid127 + 1] : 0.0f)) : tmp122);
                  }
                }
                {
                  float tmp129;
                  {
                    const int lid130 = get_local_id(0);
                    tmp129 = xs[64 * wg1 + lid130];
                  }
                  {
                    const int lid132 = get_local_id(0);
                    tmp131[lid132] = xs[64 * wg1 + lid132];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid134 = get_local_id(0);
                    tmp128[lid134] = ((((lid134) % 2) == 0) ? (tmp129 + (((lid134 + 1) < (64)) ? tmp131[lid134 + 1] : 0.0f)) : tmp129);
                  }
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                {
                  const int lid136 = get_local_id(0);
                  tmp120 = ((((lid136) % 4) == 0) ? (tmp121 + (((lid136 + 2) < (64)) ? tmp128[lid136 + 2] : 0.0f)) : tmp121);
                }
              }
              {
                float tmp138;
                {
                  float tmp139;
                  {
                    const int lid140 = get_local_id(0);
                    tmp139 = xs[64 * wg1 + lid140];
                  }
                  {
                    const int lid142 = get_local_id(0);
                    tmp141[lid142] = xs[64 * wg1 + lid142];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid144 = get_local_id(0);
                    tmp138 = ((((lid144) % 2) == 0) ? (tmp139 + (((lid144 + 1) < (64)) ? tmp141[lid144 + 1] : 0.0f)) : tmp139);
                  }
                }
                {
                  float tmp146;
                  {
                    const int lid147 = get_local_id(0);
                    tmp146 = xs[64 * wg1 + lid147];
                  }
                  {
                    const int lid149 = get_local_id(0);
                    tmp148[lid149] = xs[64 * wg1 + lid149];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid151 = get_local_id(0);
                    tmp145[lid151] = ((((lid151) % 2) == 0) ? (tmp146 + (((lid151 + 1) < (64)) ? tmp148[lid151 + 1] : 0.0f)) : tmp146);
                  }
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                {
                  const int lid153 = get_local_id(0);
                  tmp137[lid153] = ((((lid153) % 4) == 0) ? (tmp138 + (((lid153 + 2) < (64)) ? tmp145[lid153 + 2] : 0.0f)) : tmp138);
                }
              }
              barrier(CLK_LOCAL_MEM_FENCE);
              {
                const int lid155 = get_local_id(0);
                tmp119[lid155] = ((((lid155) % 8) == 0) ? (tmp120 + (((lid155 + 4) < (64)) ? tmp137[lid155 + 4] : 0.0f)) : tmp120);
              }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            {
              const int lid157 = get_local_id(0);
              tmp81[lid157] = ((((lid157) % 16) == 0) ? (tmp82 + (((lid157 + 8) < (64)) ? tmp119[lid157 + 8] : 0.0f)) : tmp82);
            }
          }
          barrier(CLK_LOCAL_MEM_FENCE);
          {
            const int lid159 = get_local_id(0);
            tmp3 = ((((lid159) % 32) == 0) ? (tmp4 + (((lid159 + 16) < (64)) ? tmp81[lid159 + 16] : 0.0f)) : tmp4);
          }
        }
        {
          float tmp161;
          {
            float tmp162;
            {
              float tmp163;
              {
                float tmp164;
                {
                  float tmp165;
                  {
                    const int lid166 = get_local_id(0);
                    tmp165 = xs[64 * wg1 + lid166];
                  }
                  {
                    const int lid168 = get_local_id(0);
                    tmp167[lid168] = xs[64 * wg1 + lid168];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid170 = get_local_id(0);
                    tmp164 = ((((lid170) % 2) == 0) ? (tmp165 + (((lid170 + 1) < (64)) ? tmp167[lid170 + 1] : 0.0f)) : tmp165);
                  }
                }
                {
                  float tmp172;
                  {
                    const int lid173 = get_local_id(0);
                    tmp172 = xs[64 * wg1 + lid173];
                  }
                  {
                    const int lid175 = get_local_id(0);
                    tmp174[lid175] = xs[64 * wg1 + lid175];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid177 = get_local_id(0);
                    tmp171[lid177] = ((((lid177) % 2) == 0) ? (tmp172 + (((lid177 + 1) < (64)) ? tmp174[lid177 + 1] : 0.0f)) : tmp172);
                  }
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                {
                  const int lid179 = get_local_id(0);
                  tmp163 = ((((lid179) % 4) == 0) ? (tmp164 + (((lid179 + 2) < (64)) ? tmp171[lid179 + 2] : 0.0f)) : tmp164);
                }
              }
              {
                float tmp181;
                {
                  float tmp182;
                  {
                    const int lid183 = get_local_id(0);
                    tmp182 = xs[64 * wg1 + lid183];
                  }
                  {
                    const int lid185 = get_local_id(0);
                    tmp184[lid185] = xs[64 * wg1 + lid185];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid187 = get_local_id(0);
                    tmp181 = ((((lid187) % 2) == 0) ? (tmp182 + (((lid187 + 1) < (64)) ? tmp184[lid187 + 1] : 0.0f)) : tmp182);
                  }
                }
                {
                  float tmp189;
                  {
                    const int lid190 = get_local_id(0);
                    tmp189 = xs[64 * wg1 + lid190];
                  }
                  {
                    const int lid192 = get_local_id(0);
                    tmp191[lid192] = xs[64 * wg1 + lid192];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid194 = get_local_id(0);
                    tmp188[lid194] = ((((lid194) % 2) == 0) ? (tmp189 + (((lid194 + 1) < (64)) ? tmp191[lid194 + 1] : 0.0f)) : tmp189);
                  }
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                {
                  const int lid196 = get_local_id(0);
                  tmp180[lid196] = ((((lid196) % 4) == 0) ? (tmp181 + (((lid196 + 2) < (64)) ? tmp188[lid196 + 2] : 0.0f)) : tmp181);
                }
              }
              barrier(CLK_LOCAL_MEM_FENCE);
              {
                const int lid198 = get_local_id(0);
                tmp162 = ((((lid198) % 8) == 0) ? (tmp163 + (((lid198 + 4) < (64)) ? tmp180[lid198 + 4] : 0.0f)) : tmp163);
              }
            }
            {
              float tmp200;
              {
                float tmp201;
                {
                  float tmp202;
                  {
                    const int lid203 = get_local_id(0);
                    tmp202 = xs[64 * wg1 + lid203];
                  }
                  {
                    const int lid205 = get_local_id(0);
                    tmp204[lid205] = xs[64 * wg1 + lid205];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid207 = get_local_id(0);
                    tmp201 = ((((lid207) % 2) == 0) ? (tmp202 + (((lid207 + 1) < (64)) ? tmp204[lid207 + 1] : 0.0f)) : tmp202);
                  }
                }
                {
                  float tmp209;
                  {
                    const int lid210 = get_local_id(0);
                    tmp209 = xs[64 * wg1 + lid210];
                  }
                  {
                    const int lid212 = get_local_id(0);
                    tmp211[lid212] = xs[64 * wg1 + lid212];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid214 = get_local_id(0);
                    tmp208[lid214] = ((((lid214) % 2) == 0) ? (tmp209 + (((lid214 + 1) < (64)) ? tmp211[lid214 + 1] : 0.0f)) : tmp209);
                  }
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                {
                  const int lid216 = get_local_id(0);
                  tmp200 = ((((lid216) % 4) == 0) ? (tmp201 + (((lid216 + 2) < (64)) ? tmp208[lid216 + 2] : 0.0f)) : tmp201);
                }
              }
              {
                float tmp218;
                {
                  float tmp219;
                  {
                    const int lid220 = get_local_id(0);
                    tmp219 = xs[64 * wg1 + lid220];
                  }
                  {
                    const int lid222 = get_local_id(0);
                    tmp221[lid222] = xs[64 * wg1 + lid222];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid224 = get_local_id(0);
                    tmp218 = ((((lid224) % 2) == 0) ? (tmp219 + (((lid224 + 1) < (64)) ? tmp221[lid224 + 1] : 0.0f)) : tmp219);
                  }
                }
                {
                  float tmp226;
                  {
                    const int lid227 = get_local_id(0);
                    tmp226 = xs[64 * wg1 + lid227];
                  }
                  {
                    const int lid229 = get_local_id(0);
                    tmp228[lid229] = xs[64 * wg1 + lid229];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid231 = get_local_id(0);
                    tmp225[lid231] = ((((lid231) % 2) == 0) ? (tmp226 + (((lid231 + 1) < (64)) ? tmp228[lid231 + 1] : 0.0f)) : tmp226);
                  }
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                {
                  const int lid233 = get_local_id(0);
                  tmp217[lid233] = ((((lid233) % 4) == 0) ? (tmp218 + (((lid233 + 2) < (64)) ? tmp225[lid233 + 2] : 0.0f)) : tmp218);
                }
              }
              barrier(CLK_LOCAL_MEM_FENCE);
              {
                const int lid235 = get_local_id(0);
                tmp199[lid235] = ((((lid235) % 8) == 0) ? (tmp200 + (((lid235 + 4) < (64)) ? tmp217[lid235 + 4] : 0.0f)) : tmp200);
              }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            {
              const int lid237 = get_local_id(0);
              tmp161 = ((((lid237) % 16) == 0) ? (tmp162 + (((lid237 + 8) < (64)) ? tmp199[lid237 + 8] : 0.0f)) : tmp162);
            }
          }
          {
            float tmp239;
            {
              float tmp240;
              {
                float tmp241;
                {
                  float tmp242;
                  {
                    const int lid243 = get_local_id(0);
                    tmp242 = xs[64 * wg1 + lid243];
                  }
                  {
                    const int lid245 = get_local_id(0);
                    tmp244[lid245] = xs[64 * wg1 + lid245];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid247 = get_local_id(0);
                    tmp241 = ((((lid247) % 2) == 0) ? (tmp242 + (((lid247 + 1) < (64)) ? tmp244[lid247 + 1] : 0.0f)) : tmp242);
                  }
                }
                {
                  float tmp249;
                  {
                    const int lid250 = get_local_id(0);
                    tmp249 = xs[64 * wg1 + lid250];
                  }
                  {
                    const int lid252 = get_local_id(0);
                    tmp251[lid252] = xs[64 * wg1 + lid252];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid254 = get_local_id(0);
                    tmp248[lid254] = ((((lid254) % 2) == 0) ? (tmp249 + (((lid254 + 1) < (64)) ? tmp251[lid254 + 1] : 0.0f)) : tmp249);
                  }
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                {
                  const int lid256 = get_local_id(0);
                  tmp240 = ((((lid256) % 4) == 0) ? (tmp241 + (((lid256 + 2) < (64)) ? tmp248[lid256 + 2] : 0.0f)) : tmp241);
                }
              }
              {
                float tmp258;
                {
                  float tmp259;
                  {
                    const int lid260 = get_local_id(0);
                    tmp259 = xs[64 * wg1 + lid260];
                  }
                  {
                    const int lid262 = get_local_id(0);
                    tmp261[lid262] = xs[64 * wg1 + lid262];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid264 = get_local_id(0);
                    tmp258 = ((((lid264) % 2) == 0) ? (tmp259 + (((lid264 + 1) < (64)) ? tmp261[lid264 + 1] : 0.0f)) : tmp259);
                  }
                }
                {
                  float tmp266;
                  {
                    const int lid267 = get_local_id(0);
                    tmp266 = xs[64 * wg1 + lid267];
                  }
                  {
                    const int lid269 = get_local_id(0);
                    tmp268[lid269] = xs[64 * wg1 + lid269];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid271 = get_local_id(0);
                    tmp265[lid271] = ((((lid271) % 2) == 0) ? (tmp266 + (((lid271 + 1) < (64)) ? tmp268[lid271 + 1] : 0.0f)) : tmp266);
                  }
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                {
                  const int lid273 = get_local_id(0);
                  tmp257[lid273] = ((((lid273) % 4) == 0) ? (tmp258 + (((lid273 + 2) < (64)) ? tmp265[lid273 + 2] : 0.0f)) : tmp258);
                }
              }
              barrier(CLK_LOCAL_MEM_FENCE);
              {
                const int lid275 = get_local_id(0);
                tmp239 = ((((lid275) % 8) == 0) ? (tmp240 + (((lid275 + 4) < (64)) ? tmp257[lid275 + 4] : 0.0f)) : tmp240);
              }
            }
            {
              float tmp277;
              {
                float tmp278;
                {
                  float tmp279;
                  {
                    const int lid280 = get_local_id(0);
                    tmp279 = xs[64 * wg1 + lid280];
                  }
                  {
                    const int lid282 = get_local_id(0);
                    tmp281[lid282] = xs[64 * wg1 + lid282];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid284 = get_local_id(0);
                    tmp278 = ((((lid284) % 2) == 0) ? (tmp279 + (((lid284 + 1) < (64)) ? tmp281[lid284 + 1] : 0.0f)) : tmp279);
                  }
                }
                {
                  float tmp286;
                  {
                    const int lid287 = get_local_id(0);
                    tmp286 = xs[64 * wg1 + lid287];
                  }
                  {
                    const int lid289 = get_local_id(0);
                    tmp288[lid289] = xs[64 * wg1 + lid289];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid291 = get_local_id(0);
                    tmp285[lid291] = ((((lid291) % 2) == 0) ? (tmp286 + (((lid291 + 1) < (64)) ? tmp288[lid291 + 1] : 0.0f)) : tmp286);
                  }
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                {
                  const int lid293 = get_local_id(0);
                  tmp277 = ((((lid293) % 4) == 0) ? (tmp278 + (((lid293 + 2) < (64)) ? tmp285[lid293 + 2] : 0.0f)) : tmp278);
                }
              }
              {
                float tmp295;
                {
                  float tmp296;
                  {
                    const int lid297 = get_local_id(0);
                    tmp296 = xs[64 * wg1 + lid297];
                  }
                  {
                    const int lid299 = get_local_id(0);
                    tmp298[lid299] = xs[64 * wg1 + lid299];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid301 = get_local_id(0);
                    tmp295 = ((((lid301) % 2) == 0) ? (tmp296 + (((lid301 + 1) < (64)) ? tmp298[lid301 + 1] : 0.0f)) : tmp296);
                  }
                }
                {
                  float tmp303;
                  {
                    const int lid304 = get_local_id(0);
                    tmp303 = xs[64 * wg1 + lid304];
                  }
                  {
                    const int lid306 = get_local_id(0);
                    tmp305[lid306] = xs[64 * wg1 + lid306];
                  }
                  barrier(CLK_LOCAL_MEM_FENCE);
                  {
                    const int lid308 = get_local_id(0);
                    tmp302[lid308] = ((((lid308) % 2) == 0) ? (tmp303 + (((lid308 + 1) < (64)) ? tmp305[lid308 + 1] : 0.0f)) : tmp303);
                  }
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                {
                  const int lid310 = get_local_id(0);
                  tmp294[lid310] = ((((lid310) % 4) == 0) ? (tmp295 + (((lid310 + 2) < (64)) ? tmp302[lid310 + 2] : 0.0f)) : tmp295);
                }
              }
              barrier(CLK_LOCAL_MEM_FENCE);
              {
                const int lid312 = get_local_id(0);
                tmp276[lid312] = ((((lid312) % 8) == 0) ? (tmp277 + (((lid312 + 4) < (64)) ? tmp294[lid312 + 4] : 0.0f)) : tmp277);
              }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            {
              const int lid314 = get_local_id(0);
              tmp238[lid314] = ((((lid314) % 16) == 0) ? (tmp239 + (((lid314 + 8) < (64)) ? tmp276[lid314 + 8] : 0.0f)) : tmp239);
            }
          }
          barrier(CLK_LOCAL_MEM_FENCE);
          {
            const int lid316 = get_local_id(0);
            tmp160[lid316] = ((((lid316) % 32) == 0) ? (tmp161 + (((lid316 + 16) < (64)) ? tmp238[lid316 + 16] : 0.0f)) : tmp161);
          }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        {
          const int lid318 = get_local_id(0);
          tmp2[lid318] = ((((lid318) % 64) == 0) ? (tmp3 + (((lid318 + 32) < (64)) ? tmp160[lid318 + 32] : 0.0f)) : tmp3);
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid319 = get_local_id(0); lid319 < 1; lid319 += 64) {
        output[wg1 + lid319] = tmp2[lid319];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
}
