/* families.h - every pass family's header (families.def lists them): its
 * options type, its results (more pdt_ctx fields) and its init and
 * release.  A new family: its header here and its line in families.def;
 * pass.h and pipeline.c do not change. */
#ifndef PDT_FAMILIES_H
#define PDT_FAMILIES_H

#include "backward/family.h"
#include "inference/family.h"
#include "memory/family.h"
#include "optimizer/family.h"
#include "transpile/family.h"

#endif
