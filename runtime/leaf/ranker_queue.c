/* ranker_queue.c: the RANKER pool's job order (ranker_queue.h). */
#include "ranker_queue.h"

#include <stddef.h>

#include "ranker.h"

void fl_rqueue_init(struct fl_rqueue *q, unsigned cap)
{
	*q = (struct fl_rqueue){ .cap = cap ? cap : 1 };
}

static void rq_append(struct fl_job **head, struct fl_job **tail, struct fl_job *j)
{
	j->next = NULL;
	if (*tail)
		(*tail)->next = j;
	else
		*head = j;
	*tail = j;
}

static struct fl_job *rq_take(struct fl_job **head, struct fl_job **tail)
{
	struct fl_job *j = *head;

	if (j) {
		*head = j->next;
		if (!*head)
			*tail = NULL;
		j->next = NULL;
	}
	return j;
}

int fl_rqueue_push_fresh(struct fl_rqueue *q, struct fl_job *j)
{
	if (q->nfresh >= q->cap)
		return -1;
	rq_append(&q->fresh_head, &q->fresh_tail, j);
	q->nfresh++;
	return 0;
}

void fl_rqueue_push_reply(struct fl_rqueue *q, struct fl_job *j)
{
	rq_append(&q->reply_head, &q->reply_tail, j);
}

struct fl_job *fl_rqueue_pop(struct fl_rqueue *q)
{
	struct fl_job *j = rq_take(&q->reply_head, &q->reply_tail);

	if (j == NULL && (j = rq_take(&q->fresh_head, &q->fresh_tail)) != NULL)
		q->nfresh--;
	return j;
}

int fl_rqueue_empty(const struct fl_rqueue *q)
{
	return q->reply_head == NULL && q->fresh_head == NULL;
}
