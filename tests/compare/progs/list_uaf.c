/* SPDX-License-Identifier: MIT */
// Use-after-free in a linked list: the removal frees a node, the caller keeps using it.
#include <stdlib.h>
#include <stdio.h>

struct node { int value; struct node *next; };

__attribute__((noinline)) struct node *list_push(struct node *head, int v)
{
    struct node *n = malloc(sizeof *n);
    n->value = v;
    n->next = head;
    return n;
}

__attribute__((noinline)) void list_remove_next(struct node *prev)
{
    struct node *victim = prev->next;
    prev->next = victim->next;
    free(victim);
}

__attribute__((noinline)) int list_sum_from(struct node *n)
{
    int s = 0;
    for (; n; n = n->next)
        s += n->value;
    return s;
}

int main(void)
{
    struct node *head = NULL;
    for (int i = 0; i < 4; i++)
        head = list_push(head, i);
    struct node *second = head->next;
    list_remove_next(head);
    printf("%d\n", list_sum_from(second));   /* BUG: second was freed */
    return 0;
}
