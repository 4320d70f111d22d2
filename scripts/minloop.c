// A minimal io_uring random-read loop, the reference drivescope's engine is compared with in
// docs/PERFORMANCE.md (not part of drivescope, not built by cargo):
//   apt-get install liburing-dev && gcc -O2 -o /tmp/minloop scripts/minloop.c -luring
//   /tmp/minloop TARGET QD SECONDS [FLAGS [WAIT_NR [SUBMIT_MIN [ONE_BY_ONE]]]]
// FLAGS: 1 = SINGLE_ISSUER|DEFER_TASKRUN, 2 = COOP_TASKRUN, 4 = IOPOLL (polled, --hipri). WAIT_NR: completions to wait
// for per enter (1 = as drivescope). SUBMIT_MIN: refill only when this many slots are free.
// ONE_BY_ONE: 1 = one io_uring_enter per SQE. 4k reads, registered file and buffers,
// READ_FIXED, uniform random offsets; prints IOPS and I/Os per enter.
#define _GNU_SOURCE
#include <liburing.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/fs.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
int main(int argc,char**argv){
  const char*path=argv[1]; int qd=atoi(argv[2]); double dur=atof(argv[3]); int flags=argc>4?atoi(argv[4]):0; int waitnr=argc>5?atoi(argv[5]):1; int subb=argc>6?atoi(argv[6]):1; int one=argc>7?atoi(argv[7]):0;
  unsigned bs=4096;
  int fd=open(path,O_RDONLY|O_DIRECT); if(fd<0){perror("open");return 1;}
  unsigned long long size; if(ioctl(fd,BLKGETSIZE64,&size)<0){size=lseek(fd,0,SEEK_END);}
  unsigned long long nblk=size/bs;
  struct io_uring ring; struct io_uring_params p; memset(&p,0,sizeof p);
  if(flags&1) p.flags|=IORING_SETUP_SINGLE_ISSUER|IORING_SETUP_DEFER_TASKRUN;
  if(flags&2) p.flags|=IORING_SETUP_COOP_TASKRUN;
  if(flags&4) p.flags|=IORING_SETUP_IOPOLL;
  if(io_uring_queue_init_params(qd*2,&ring,&p)<0){perror("init");return 1;}
  io_uring_register_files(&ring,&fd,1);
  struct iovec*iov=calloc(qd,sizeof *iov);
  for(int i=0;i<qd;i++){posix_memalign(&iov[i].iov_base,4096,bs);iov[i].iov_len=bs;memset(iov[i].iov_base,0,bs);}
  io_uring_register_buffers(&ring,iov,qd);
  unsigned long long x=88172645463325252ULL, done=0, enters=0;
  int *freel=malloc(qd*sizeof(int)); int nfree=qd; for(int i=0;i<qd;i++)freel[i]=i;
  double t0=now(), end=t0+dur; int inflight=0;
  while(1){
    double t=now(); int stop=t>=end;
    if(nfree>=subb || inflight==0) while(!stop && nfree>0){
      int s=freel[--nfree];
      x^=x<<13;x^=x>>7;x^=x<<17;
      struct io_uring_sqe*sqe=io_uring_get_sqe(&ring);
      io_uring_prep_read_fixed(sqe,0,iov[s].iov_base,bs,(x%nblk)*bs,s);
      sqe->flags|=IOSQE_FIXED_FILE; sqe->user_data=s; inflight++; if(one){io_uring_submit(&ring); enters++;}
    }
    if(inflight==0)break;
    io_uring_submit_and_wait(&ring, inflight < waitnr ? 1 : waitnr); enters++;
    struct io_uring_cqe*cqe; unsigned head,n=0;
    io_uring_for_each_cqe(&ring,head,cqe){ if(cqe->res!=(int)bs){fprintf(stderr,"res %d\n",cqe->res);} freel[nfree++]=cqe->user_data; n++; }
    io_uring_cq_advance(&ring,n); inflight-=n; done+=n;
  }
  double el=now()-t0;
  printf("iops %.0f ios %llu per_enter %.1f\n",done/el,done,(double)done/enters);
  return 0;
}
