/* bench/host/probe.c: does the host take an idle guest's memory back? (BENCHMARKS.md, "The first
 * turn after 15 quiet minutes"). Maps five 32 MB regions and touches every page, maps a file and
 * reads every page, then at 5, 150, 300, 600 and 900 s of sleep re-reads one untouched region
 * and the file, and maps and touches a fresh 32 MB, printing each time.
 *   gcc -O2 -o probe probe.c && ./probe target/release/kernel-agentd */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/resource.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec/1e6;}
#define SZ (32L<<20)
int main(int argc,char**argv){
  int cps[]={5,150,300,600,900}; int n=5;
  char* reg[5];
  for(int i=0;i<n;i++){reg[i]=mmap(0,SZ,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0); for(long p=0;p<SZ;p+=4096) reg[i][p]=1;}
  int fd=open(argv[1],O_RDONLY); struct stat st; fstat(fd,&st);
  char* f=mmap(0,st.st_size,PROT_READ,MAP_PRIVATE,fd,0); volatile long s=0;
  for(long p=0;p<st.st_size;p+=4096) s+=f[p];
  double t0=now(); int slept=0;
  for(int i=0;i<n;i++){
    sleep(cps[i]-slept); slept=cps[i];
    struct rusage r0,r1; getrusage(RUSAGE_SELF,&r0);
    double a=now(); for(long p=0;p<SZ;p+=4096) s+=reg[i][p]; double b=now();
    char* fr=mmap(0,SZ,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0);
    double c=now(); for(long p=0;p<SZ;p+=4096) fr[p]=1; double d=now(); munmap(fr,SZ);
    double e=now(); for(long p=0;p<st.st_size;p+=4096) s+=f[p]; double g=now();
    getrusage(RUSAGE_SELF,&r1);
    printf("t=%4ds resident32MB=%.2fms fresh32MB=%.2fms file%ldMB=%.2fms minflt=%ld majflt=%ld\n",cps[i],b-a,d-c,st.st_size>>20,g-e,r1.ru_minflt-r0.ru_minflt,r1.ru_majflt-r0.ru_majflt);
    fflush(stdout);
  }
  return 0;
}
