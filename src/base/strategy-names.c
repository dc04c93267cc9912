/* The names of the update strategies (an enum the assembly, the operators
 * and the backends share), for messages, reports and
 * fea_update_strategy_name(). */
#include <stddef.h>

#include <feaccel/assembly.h>

static const char *const strategy_names[] = {
    [FEA_UPDATE_SERIAL] = "serial",
    [FEA_UPDATE_COLORING] = "coloring",
    [FEA_UPDATE_ATOMIC_CAS] = "atomic-cas",
    [FEA_UPDATE_MUTEX] = "mutex",
    [FEA_UPDATE_PRIVATE_BUFFERS] = "private-buffers",
    [FEA_UPDATE_TSX] = "tsx",
    [FEA_UPDATE_AUTO] = "auto",
    [FEA_UPDATE_PRIVATE_COPIES] = "private-copies",
};

const char *fea_update_strategy_name(fea_update_strategy strategy) {
  if ((int)strategy < 0 || (size_t)strategy >= sizeof strategy_names / sizeof *strategy_names)
    return NULL;
  return strategy_names[strategy];
}
