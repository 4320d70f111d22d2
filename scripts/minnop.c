// A minimal io_uring NOP loop, the kernel's own NOP ceiling that drivescope's nop engine is
// compared with in docs/PERFORMANCE.md (like fio's `t/io_uring -N1 -t1`; not part of
// drivescope, not built by cargo):
//   apt-get install liburing-dev && gcc -O2 -o /tmp/minnop scripts/minnop.c -luring
//   /tmp/minnop QD SECONDS [CLOCK]
// Fills the queue with NOPs, submits them with the wait for one completion in one
// io_uring_enter, reaps all, refills; SINGLE_ISSUER|DEFER_TASKRUN as drivescope. CLOCK=1
// reads the clock once per batch and stamps each completion into a plain histogram
// (log2 buckets), a floor for what per-I/O latency recording costs. Prints NOPs/s.
#define _GNU_SOURCE
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static unsigned long long ns(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000ull+t.tv_nsec;}
int main(int argc,char**argv){
  int qd=atoi(argv[1]); double dur=atof(argv[2]); int clk=argc>3?atoi(argv[3]):0;
  struct io_uring ring; struct io_uring_params p; memset(&p,0,sizeof p);
  p.flags=IORING_SETUP_SINGLE_ISSUER|IORING_SETUP_DEFER_TASKRUN|IORING_SETUP_COOP_TASKRUN;
  if(io_uring_queue_init_params(qd*2,&ring,&p)<0){perror("init");return 1;}
  unsigned long long *t_sub=calloc(qd,8), hist[64]={0}, done=0, start=ns(), end=start+(unsigned long long)(dur*1e9), now=start;
  int inflight=0;
  while(now<end){
    for(int i=inflight;i<qd;i++){struct io_uring_sqe*s=io_uring_get_sqe(&ring); io_uring_prep_nop(s); s->user_data=i; if(clk) t_sub[i]=now;}
    inflight=qd;
    io_uring_submit_and_wait(&ring,1);
    if(clk) now=ns();
    struct io_uring_cqe*c; unsigned head, n=0;
    io_uring_for_each_cqe(&ring,head,c){ if(clk){unsigned long long d=now-t_sub[c->user_data]; hist[63-__builtin_clzll(d|1)]++;} n++; }
    io_uring_cq_advance(&ring,n); inflight-=n; done+=n;
    if(!clk && (done & 0xffff) < n) now=ns();
  }
  double secs=(ns()-start)/1e9;
  printf("%.0f NOPs/s (QD%d, %.1fs%s)\n",done/secs,qd,secs,clk?", clock and histogram per batch":"");
  return 0;
}
