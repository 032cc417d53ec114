/* optimizer_table.c - one row per optimizer class of Paddle 1.8's fluid
 * optimizer.py: the update op, the arguments with their defaults and the
 * accumulators _create_accumulators adds (see optimizer_table.h). */
#include "optimizer_table.h"

#include <string.h>

#define LR {"learning_rate", OPT_KEY_FLOAT, 0.001, NULL}

/* Defaults are those of Paddle's classes; where fluid requires an argument
 * (learning_rate, momentum) the paddle.optimizer default is used. */
static const opt_def OPTS[] = {
    {"sgd", "sgd", {LR}, {{0}}, {0}, false, false},
    {"momentum", "momentum",
     {LR, {"momentum", OPT_KEY_FLOAT, 0.9, "mu"},
      {"use_nesterov", OPT_KEY_BOOL, 0, "use_nesterov"}},
     {{"velocity", "Velocity", "VelocityOut", false, -1, NULL}}, {0}, false, false},
    {"lars_momentum", "lars_momentum",
     {LR, {"momentum", OPT_KEY_FLOAT, 0.9, "mu"},
      {"lars_coeff", OPT_KEY_FLOAT, 0.001, "lars_coeff"},
      {"lars_weight_decay", OPT_KEY_FLOAT, 0.0005, "lars_weight_decay"}},
     {{"velocity", "Velocity", "VelocityOut", false, -1, NULL}}, {0}, false, false},
    {"adagrad", "adagrad",
     {LR, {"epsilon", OPT_KEY_FLOAT, 1e-6, "epsilon"},
      {"initial_accumulator_value", OPT_KEY_FLOAT, 0.0, NULL}},
     {{"moment", "Moment", "MomentOut", false, 2, NULL}}, {0}, false, false},
    {"adam", "adam",
     {LR, {"beta1", OPT_KEY_FLOAT, 0.9, "beta1"}, {"beta2", OPT_KEY_FLOAT, 0.999, "beta2"},
      {"epsilon", OPT_KEY_FLOAT, 1e-8, "epsilon"}, {"lazy_mode", OPT_KEY_BOOL, 0, "lazy_mode"}},
     {{"moment1", "Moment1", "Moment1Out", false, -1, NULL},
      {"moment2", "Moment2", "Moment2Out", false, -1, NULL},
      {"beta1_pow_acc", "Beta1Pow", "Beta1PowOut", true, 1, "cpu"},
      {"beta2_pow_acc", "Beta2Pow", "Beta2PowOut", true, 2, "cpu"}},
     {"Beta1Tensor", "Beta2Tensor"}, true, false},
    {"adamax", "adamax",
     {LR, {"beta1", OPT_KEY_FLOAT, 0.9, "beta1"}, {"beta2", OPT_KEY_FLOAT, 0.999, "beta2"},
      {"epsilon", OPT_KEY_FLOAT, 1e-8, "epsilon"}},
     {{"moment", "Moment", "MomentOut", false, -1, NULL},
      {"inf_norm", "InfNorm", "InfNormOut", false, -1, NULL},
      {"beta1_pow_acc", "Beta1Pow", NULL, true, 1, NULL}},
     {0}, false, true},
    {"decayed_adagrad", "decayed_adagrad",
     {LR, {"decay", OPT_KEY_FLOAT, 0.95, "decay"}, {"epsilon", OPT_KEY_FLOAT, 1e-6, "epsilon"}},
     {{"moment", "Moment", "MomentOut", false, -1, NULL}}, {0}, false, false},
    {"rmsprop", "rmsprop",
     {LR, {"rho", OPT_KEY_FLOAT, 0.95, "decay"}, {"epsilon", OPT_KEY_FLOAT, 1e-6, "epsilon"},
      {"momentum", OPT_KEY_FLOAT, 0.0, "momentum"}, {"centered", OPT_KEY_BOOL, 0, "centered"}},
     {{"momentum", "Moment", "MomentOut", false, -1, NULL},
      {"mean_square", "MeanSquare", "MeanSquareOut", false, -1, NULL},
      {"mean_grad", "MeanGrad", "MeanGradOut", false, -1, NULL}},
     {0}, false, false},
    /* Paddle 1.8 passes l1 as the l2 attr (a typo); pdtrans passes l2. */
    {"ftrl", "ftrl",
     {LR, {"l1", OPT_KEY_FLOAT, 0.0, "l1"}, {"l2", OPT_KEY_FLOAT, 0.0, "l2"},
      {"lr_power", OPT_KEY_FLOAT, -0.5, "lr_power"}},
     {{"squared", "SquaredAccumulator", "SquaredAccumOut", false, -1, NULL},
      {"linear", "LinearAccumulator", "LinearAccumOut", false, -1, NULL}},
     {0}, false, false},
};

enum { N_OPTS = sizeof OPTS / sizeof *OPTS };

const opt_def *opt_def_by_kind(const char *kind)
{
    for (size_t i = 0; i < N_OPTS; i++)
        if (strcmp(OPTS[i].kind, kind) == 0)
            return &OPTS[i];
    return NULL;
}

const opt_def *opt_def_by_op(const char *op_type)
{
    for (size_t i = 0; i < N_OPTS; i++)
        if (strcmp(OPTS[i].op, op_type) == 0)
            return &OPTS[i];
    return NULL;
}

size_t opt_def_n_accs(const opt_def *d)
{
    size_t n = 0;
    while (n < OPT_MAX_ACCS && d->accs[n].name)
        n++;
    return n;
}

const opt_def *opt_defs(size_t *n)
{
    *n = N_OPTS;
    return OPTS;
}

int opt_accumulator_sliced(const char *op_type, const char *slot)
{
    const opt_def *d = opt_def_by_op(op_type);
    if (!d)
        return -1;
    for (size_t a = 0; a < OPT_MAX_ACCS && d->accs[a].name; a++)
        if (strcmp(d->accs[a].in, slot) == 0)
            return !d->accs[a].scalar;
    return 0;
}
