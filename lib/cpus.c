// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * TIERTRAIN_MOVER_CPUS: the CPUs that the library's own threads of a
 * session run on (the kernel backend's movers; the move_pages backend's
 * timer, evict and prefetch threads), so that they keep off the CPUs the
 * training computes on (Documentation/mover.md, "CPUs").
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* One number of a CPU list at *@p, below @ncpus: advances *@p. */
static int tt_cpus_num(const char **p, long ncpus, unsigned long *out)
{
	char *end;

	if (**p < '0' || **p > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoul(*p, &end, 10);
	if (errno || *out >= (unsigned long)ncpus)
		return -EINVAL;
	*p = end;
	return 0;
}

int tt_cpus_parse(const char *list, long ncpus, cpu_set_t *set)
{
	const char *p = list;
	unsigned long a, b, c;

	CPU_ZERO(set);
	if (ncpus > CPU_SETSIZE)
		ncpus = CPU_SETSIZE;
	for (;;) {
		if (tt_cpus_num(&p, ncpus, &a))
			return -EINVAL;
		b = a;
		if (*p == '-') {
			p++;
			if (tt_cpus_num(&p, ncpus, &b) || b < a)
				return -EINVAL;
		}
		for (c = a; c <= b; c++)
			CPU_SET(c, set);
		if (!*p)
			return 0;
		if (*p++ != ',')
			return -EINVAL;
	}
}

int tt_cpus_open(struct tt_session *s)
{
	const char *env = getenv(TT_ENV_MOVER_CPUS);
	long ncpus = sysconf(_SC_NPROCESSORS_CONF);

	s->cpus_set = 0;
	if (!env || !*env)
		return 0;
	if (ncpus < 1)
		ncpus = 1;
	if (tt_cpus_parse(env, ncpus, &s->cpus)) {
		fprintf(stderr,
			"libtiertrain: %s=\"%s\" is not a list of CPUs (\"0-3,8\"; this machine has CPUs 0..%ld)\n",
			TT_ENV_MOVER_CPUS, env, ncpus - 1);
		return -EINVAL;
	}
	s->cpus_set = 1;
	return 0;
}

int tt_cpus_thread(const struct tt_session *s, pthread_t *th,
		   void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	int ret;

	if (!s->cpus_set)
		return pthread_create(th, NULL, fn, arg);
	ret = pthread_attr_init(&attr);
	if (ret)
		return ret;
	ret = pthread_attr_setaffinity_np(&attr, sizeof(s->cpus), &s->cpus);
	if (!ret)
		ret = pthread_create(th, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	if (ret == EINVAL)
		fprintf(stderr,
			"libtiertrain: %s=\"%s\": a thread may not run on these CPUs (offline, or outside the process's cpuset)\n",
			TT_ENV_MOVER_CPUS, getenv(TT_ENV_MOVER_CPUS));
	return ret;
}
