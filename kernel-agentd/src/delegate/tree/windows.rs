//! Windows: a delegation's processes are the members of a Job object. The CLI is put in a new
//! job as soon as it is started; everything it starts afterwards is in the job too (a process
//! cannot leave it: breaking away is not allowed), so ending the job ends the whole tree. The job
//! is created with "kill on job close", so its members also die when agentd closes the handle —
//! when the delegation is over, and when agentd exits or crashes.
//!
//! The only `unsafe` of the crate besides `listen::pipe`: the Win32 job calls, each checked, the
//! handles closed on drop.
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::io;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectExtendedLimitInformation,
    SetInformationJobObject, TerminateJobObject,
};
use windows_sys::Win32::System::Threading::{OpenProcess, PROCESS_SET_QUOTA, PROCESS_TERMINATE};

/// The job holding a delegation's processes (`None` when it could not be set up: then only the
/// CLI's own tree is killed, with `taskkill /T`).
#[derive(Debug)]
pub(in crate::delegate) struct Tree {
    job: Option<Job>,
}

impl Tree {
    /// Puts the process `root` (just started) into a new job.
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

impl Drop for Job {
    fn drop(&mut self) {
        // SAFETY: owned, closed once; "kill on job close" ends what is left in it.
        unsafe { CloseHandle(self.0) };
    }
}
