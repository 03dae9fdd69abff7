/*
 * codec_ctx.c: the per-thread codec context (zarr_codec_ctx, zarr.h): the chain's two scratch buffers
 * and the states codec kernels keep between calls (compressor contexts), one slot per kind of state,
 * created on first use by the kernel that needs it (zarr__codec_ctx_state) and destroyed with the
 * context.
 */
#include "codec_class.h"

#include <stdlib.h>

zarr_codec_ctx *
zarr_codec_ctx_new(void)
{
    zarr_codec_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) {
        zarr_error(ZARR_ENOMEM, "out of memory allocating a codec context");
        return NULL;
    }
    return ctx;
}

void
zarr_codec_ctx_free(zarr_codec_ctx *ctx)
{
    if (!ctx)
        return;
    for (size_t i = 0; i < ctx->nstates; i++)
        ctx->states[i].ops->destroy(ctx->states[i].p);
    zarr_buf_free(&ctx->scratch[0]);
    zarr_buf_free(&ctx->scratch[1]);
    free(ctx);
}

void *
zarr__codec_ctx_state(zarr_codec_ctx *ctx, const zarr__codec_state_ops *ops)
{
    void *p;
    for (size_t i = 0; i < ctx->nstates; i++)
        if (ctx->states[i].ops == ops)
            return ctx->states[i].p;
    if (ctx->nstates == ZARR__CTX_MAX_STATES) {
        zarr_error(ZARR_EINVAL, "codec context: no room for the %s state (%d kinds at most)", ops->name,
                   ZARR__CTX_MAX_STATES);
        return NULL;
    }
    if (!(p = ops->create())) {
        zarr_error(ZARR_ENOMEM, "out of memory creating the %s state", ops->name);
        return NULL;
    }
    ctx->states[ctx->nstates].ops = ops;
    ctx->states[ctx->nstates].p   = p;
    ctx->nstates++;
    return p;
}
