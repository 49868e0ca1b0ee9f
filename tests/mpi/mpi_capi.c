/* tests/mpi/mpi_capi.c - every function of dqsgd_mpi.h compiled as an exported copy, so that
 * tests/contraction_audit.sh can read their object code. Not a test of its own. */
#define DQ_API __attribute__((visibility("default")))
#include "dqsgd_mpi.h"
