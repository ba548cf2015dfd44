/* schedule.h: the articles' profiler schedule, as torch.profiler.schedule spells it.
 *
 * `wait` steps run untraced, `warmup_steps` run traced-but-discarded, `active` steps are recorded
 * (ProfilerStep#N). `warmup` iterations run before all of it, untimed: 0 (the default) keeps the
 * first step cold, as in the articles.
 */
#ifndef SCHEDULE_H
#define SCHEDULE_H

typedef struct {
    int wait, warmup_steps, active, warmup;
} schedule_t;

#endif
