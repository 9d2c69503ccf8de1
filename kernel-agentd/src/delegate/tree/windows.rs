//! Windows: a delegation's processes are the members of a Job object. The CLI is created
//! suspended ([`START_FLAGS`]), put in a new job, and only then let run ([`resume`]: its primary
//! thread, found with a Toolhelp32 thread snapshot), so it cannot start anything before it is in
//! the job; everything it starts is in the job too (a process cannot leave it: breaking away is
//! not allowed), so ending the job ends the whole tree. The job is created with "kill on job
//! close", so its members also die when agentd closes the handle — when the delegation is over,
//! and when agentd exits or crashes.
//!
//! On ARCHITECTURE.md's unsafe allow-list: the Win32 job and thread calls, each checked, the
//! handles closed on drop.
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::io;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, TH32CS_SNAPTHREAD, THREADENTRY32, Thread32First, Thread32Next,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectExtendedLimitInformation,
    SetInformationJobObject, TerminateJobObject,
};
use windows_sys::Win32::System::Threading::{
    CREATE_SUSPENDED, OpenProcess, OpenThread, PROCESS_SET_QUOTA, PROCESS_TERMINATE, ResumeThread,
    THREAD_SUSPEND_RESUME,
};

/// The creation flags the CLI is started with besides its own: suspended, so that nothing runs
/// before [`Tree::new`] put it in its job; [`resume`] then starts it.
pub(in crate::delegate) const START_FLAGS: u32 = CREATE_SUSPENDED;

/// The job holding a delegation's processes (`None` when it could not be set up: then only the
/// CLI's own tree is killed, with `taskkill /T`).
#[derive(Debug)]
pub(in crate::delegate) struct Tree {
    job: Option<Job>,
}

impl Tree {
    /// Puts the process `root` (just started, suspended) into a new job; [`resume`] it next,
    /// whatever this says.
    pub(in crate::delegate) fn new(root: u32) -> Tree {
        match Job::for_process(root) {
            Ok(job) => Tree { job: Some(job) },
            Err(e) => {
                tracing::warn!(pid = root, error = %e, "cannot put the CLI in a job object; only its own process tree will be killed");
                Tree { job: None }
            }
        }
    }

    /// Ends every process of the job at once; `false` when there is no job.
    pub(in crate::delegate) fn kill(&self) -> bool {
        self.job.as_ref().is_some_and(Job::terminate)
    }

    /// Nothing to look up: the job follows its members itself.
    pub(in crate::delegate) fn scan(&mut self) {}

    /// Nothing to disarm: closing the job (on drop) kills only what is still running in it,
    /// which must not outlive the delegation anyway.
    pub(in crate::delegate) fn disarm(&mut self) {}
}

/// An owned job handle, created with "kill on job close".
#[derive(Debug)]
struct Job(HANDLE);

// SAFETY: a job handle may be used from any thread.
unsafe impl Send for Job {}
// SAFETY: as above; the calls made through `&Job` are thread-safe Win32 calls.
unsafe impl Sync for Job {}

impl Job {
    fn for_process(pid: u32) -> io::Result<Job> {
        // SAFETY: no name, default security; the handle is owned by `Job` (closed on drop).
        let handle = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if handle.is_null() {
            return Err(io::Error::last_os_error());
        }
        let job = Job(handle);
        // SAFETY: a zeroed JOBOBJECT_EXTENDED_LIMIT_INFORMATION is a valid "no limits" value.
        let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        // SAFETY: `limits` is the structure this information class takes, with its size.
        let ok = unsafe {
            SetInformationJobObject(
                job.0,
                JobObjectExtendedLimitInformation,
                (&raw const limits).cast::<c_void>(),
                std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: opens the child by pid; the handle is closed below.
        let process = unsafe { OpenProcess(PROCESS_SET_QUOTA | PROCESS_TERMINATE, 0, pid) };
        if process.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: both handles are valid here.
        let ok = unsafe { AssignProcessToJobObject(job.0, process) };
        let assigned = if ok == 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        };
        // SAFETY: opened above, closed once.
        unsafe { CloseHandle(process) };
        assigned.map(|()| job)
    }

    fn terminate(&self) -> bool {
        // SAFETY: a valid job handle.
        let ok = unsafe { TerminateJobObject(self.0, 1) };
        if ok == 0 {
            tracing::warn!(error = %io::Error::last_os_error(), "cannot end the CLI's job");
        }
        ok != 0
    }
}

/// Lets the process `pid`, created suspended, run: resumes its threads (a process created
/// suspended has one, its primary thread). An error when none could be resumed; the caller then
/// ends the process.
pub(in crate::delegate) fn resume(pid: u32) -> io::Result<()> {
    let snapshot = Snapshot::threads()?;
    let mut resumed = 0;
    let mut last_error = None;
    for thread in snapshot.threads_of(pid) {
        // SAFETY: opens a thread by id; the handle is closed below.
        let handle = unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, thread) };
        if handle.is_null() {
            last_error = Some(io::Error::last_os_error());
            continue;
        }
        // SAFETY: a valid thread handle with THREAD_SUSPEND_RESUME access.
        let previous = unsafe { ResumeThread(handle) };
        if previous == u32::MAX {
            last_error = Some(io::Error::last_os_error());
        } else {
            resumed += 1;
        }
        // SAFETY: opened above, closed once.
        unsafe { CloseHandle(handle) };
    }
    if resumed > 0 {
        return Ok(());
    }
    Err(last_error.unwrap_or_else(|| {
        io::Error::other(format!("no thread of process {pid} in the thread snapshot"))
    }))
}

/// An owned Toolhelp32 snapshot of the system's threads.
struct Snapshot(HANDLE);

impl Snapshot {
    fn threads() -> io::Result<Snapshot> {
        // SAFETY: a snapshot of every thread (the process id is ignored for threads); the
        // handle is owned by `Snapshot` (closed on drop).
        let handle = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) };
        if handle == INVALID_HANDLE_VALUE || handle.is_null() {
            return Err(io::Error::last_os_error());
        }
        Ok(Snapshot(handle))
    }

    /// The ids of the threads of process `pid` in the snapshot.
    fn threads_of(&self, pid: u32) -> Vec<u32> {
        let mut out = Vec::new();
        // SAFETY: a zeroed THREADENTRY32 is valid once its size is set.
        let mut entry: THREADENTRY32 = unsafe { std::mem::zeroed() };
        entry.dwSize = std::mem::size_of::<THREADENTRY32>() as u32;
        // SAFETY: a valid snapshot handle and an entry with its size set.
        let mut more = unsafe { Thread32First(self.0, &raw mut entry) } != 0;
        while more {
            if entry.th32OwnerProcessID == pid {
                out.push(entry.th32ThreadID);
            }
            // SAFETY: as above.
            more = unsafe { Thread32Next(self.0, &raw mut entry) } != 0;
        }
        out
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        // SAFETY: owned, closed once.
        unsafe { CloseHandle(self.0) };
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        // SAFETY: owned, closed once; "kill on job close" ends what is left in it.
        unsafe { CloseHandle(self.0) };
    }
}
