//! What the server is doing now, so that a fault can say what failed: a guard that code
//! sets around work that may fail in a way no caller caused ([`doing`]), the panic caught
//! with the innermost guard, its message and where it was raised ([`catch`], with the
//! hook [`install_hook`] puts in place once), and the test-only trigger that makes one
//! such place fail ([`arm`]). A leaf: it names nothing of the crate.

use std::any::Any;
use std::borrow::Cow;
use std::cell::RefCell;
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Once, OnceLock};

/// The places a guard names, for the test-only trigger (`BMAD_FAULT_INJECT`): handling a
/// call at all, reading and scoring a submission, judging a section's text (the fix
/// track's `Failing Test`), running the machine, rendering the role prompt, writing the
/// change.
pub const PLACES: [&str; 6] = ["call", "read", "judge", "machine", "prompt", "write"];

/// What an injected fault's panic says, so that nobody takes it for a real one.
pub const INJECTED: &str = "fault injected for a test (BMAD_FAULT_INJECT)";

thread_local! {
    /// What this thread is doing, innermost last.
    static DOING: RefCell<Vec<Cow<'static, str>>> = const { RefCell::new(Vec::new()) };
    /// What the hook (or, without it, the innermost guard) saw of the last panic here.
    static RAISED: RefCell<Option<Raised>> = const { RefCell::new(None) };
}

/// The place a test made fail, once per process ([`arm`]).
static ARMED: OnceLock<String> = OnceLock::new();

#[derive(Debug, Default)]
struct Raised {
    doing: Option<String>,
    location: Option<String>,
}

/// A failure of the server's own: what it was doing, what went wrong, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// What the server was doing, as "could not …" goes on: "judge the `Failing Test`
    /// section". `None` when no guard was set.
    pub doing: Option<String>,
    /// The panic's message, or the error's.
    pub message: String,
    /// Where a panic was raised (`src/workflow/sections.rs:294:9`), when the hook saw it.
    pub location: Option<String>,
    /// Whether it was a panic (else an error the server cannot explain to the caller).
    pub panicked: bool,
}

impl Fault {
    /// A failure that is no panic: an error of the server's own while `doing`.
    pub fn error(doing: impl Into<String>, message: impl Into<String>) -> Fault {
        Fault {
            doing: Some(doing.into()),
            message: message.into(),
            location: None,
            panicked: false,
        }
    }

    /// A panic known only by its payload (a task that was not run through [`catch`]).
    pub fn from_payload(payload: &(dyn Any + Send)) -> Fault {
        Fault {
            doing: None,
            message: payload_message(payload),
            location: None,
            panicked: true,
        }
    }

    /// What went wrong, in a few words: "it panicked at `<where>`: `<message>`".
    pub fn cause(&self) -> String {
        match (self.panicked, &self.location) {
            (true, Some(at)) => format!("it panicked at {at}: {}", self.message),
            (true, None) => format!("it panicked: {}", self.message),
            (false, _) => self.message.clone(),
        }
    }
}

/// Marks what the server is doing until it is dropped. Not `Send`: it belongs to the
/// thread it was made on.
#[must_use = "the guard says what is being done only while it lives"]
pub struct Doing {
    _thread: PhantomData<*const ()>,
}

/// Says that this thread is now doing `what` (completing "could not …"), at `place` (one
/// of [`PLACES`]), until the guard is dropped. Where a test armed `place`, it panics here,
/// as a defect there would, at the caller's line.
#[track_caller]
pub fn doing(place: &'static str, what: impl Into<Cow<'static, str>>) -> Doing {
    let _ = DOING.try_with(|d| d.borrow_mut().push(what.into()));
    let guard = Doing {
        _thread: PhantomData,
    };
    if ARMED.get().is_some_and(|armed| armed == place) {
        panic!("{INJECTED} at `{place}`");
    }
    guard
}

impl Drop for Doing {
    fn drop(&mut self) {
        let _ = DOING.try_with(|d| {
            let Ok(mut d) = d.try_borrow_mut() else {
                return;
            };
            // Unwinding: the innermost guard is what failed, for a catch without the hook.
            if std::thread::panicking() {
                let doing = d.last().map(|w| w.to_string());
                let _ = RAISED.try_with(|r| {
                    if let Ok(mut r) = r.try_borrow_mut() {
                        r.get_or_insert_with(|| Raised {
                            doing,
                            location: None,
                        });
                    }
                });
            }
            d.pop();
        });
    }
}

/// What this thread is doing now: the innermost guard's words.
pub fn now() -> Option<String> {
    DOING
        .try_with(|d| d.try_borrow().ok()?.last().map(|w| w.to_string()))
        .ok()
        .flatten()
}

/// Runs `f`, turning a panic in it into a [`Fault`] that says what was being done.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, Fault> {
    // A panic caught elsewhere on this thread earlier is not this one.
    let _ = RAISED.try_with(|r| r.borrow_mut().take());
    match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(t) => Ok(t),
        Err(payload) => {
            let raised = RAISED
                .try_with(|r| r.borrow_mut().take())
                .ok()
                .flatten()
                .unwrap_or_default();
            Err(Fault {
                doing: raised.doing,
                message: payload_message(payload.as_ref()),
                location: raised.location,
                panicked: true,
            })
        }
    }
}

/// Puts in place, once per process, the hook that notes where each panic was raised and
/// what its thread was doing, then hands the panic to the hook that was there before (so
/// its line still reaches stderr).
pub fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let location = info
                .location()
                .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
            let doing = now();
            let _ = RAISED.try_with(|r| {
                if let Ok(mut r) = r.try_borrow_mut() {
                    *r = Some(Raised { doing, location });
                }
            });
            previous(info);
        }));
    });
}

/// Makes the guard at `place` panic, for the rest of the process: a test's way to make
/// the real binary fail one of its own calls. Only the first call counts.
pub fn arm(place: &str) {
    let _ = ARMED.set(place.to_string());
}

fn payload_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_says_what_was_being_done_and_the_guards_unwind() {
        let caught = catch(|| {
            let _call = doing("call", "handle the `submit` call");
            let _judge = doing("judge", "judge the `Failing Test` section");
            assert_eq!(now().as_deref(), Some("judge the `Failing Test` section"));
            let v: Vec<u8> = Vec::new();
            v[usize::from(v.is_empty())]
        })
        .unwrap_err();
        assert_eq!(
            caught.doing.as_deref(),
            Some("judge the `Failing Test` section")
        );
        assert!(caught.message.contains("index out of bounds"), "{caught:?}");
        assert!(caught.panicked);
        assert_eq!(now(), None, "every guard was dropped on the way out");
        // A panic outside every guard says nothing of what was done.
        let bare = catch(|| -> u8 { panic!("plain {}", 1) }).unwrap_err();
        assert_eq!((bare.doing, bare.message.as_str()), (None, "plain 1"));
    }

    #[test]
    fn a_call_that_does_not_panic_is_answered_and_leaves_nothing_behind() {
        let v = catch(|| {
            let _g = doing("machine", "run the workflow's machine");
            7
        });
        assert_eq!(v, Ok(7));
        assert_eq!(now(), None);
    }

    #[test]
    fn the_hook_notes_where_the_panic_was_raised() {
        install_hook();
        let caught = catch(|| -> u8 {
            let _g = doing("write", "write the change");
            panic!("disk on fire");
        })
        .unwrap_err();
        let at = caught.location.clone().unwrap();
        assert!(at.starts_with("src/fault.rs:"), "{at}");
        assert_eq!(caught.doing.as_deref(), Some("write the change"));
        assert!(
            caught.cause().starts_with("it panicked at src/fault.rs:"),
            "{}",
            caught.cause()
        );
        assert!(caught.cause().ends_with(": disk on fire"));
    }

    #[test]
    fn an_error_of_the_servers_own_is_a_fault_without_a_panic() {
        let f = Fault::error("seal the dialog's question", "the key is too short");
        assert_eq!(f.cause(), "the key is too short");
        assert!(!f.panicked);
        let payload: Box<dyn Any + Send> = Box::new("boom");
        assert_eq!(Fault::from_payload(payload.as_ref()).message, "boom");
    }

    #[test]
    fn an_armed_place_fails_where_its_guard_is_set_and_nowhere_else() {
        // A place of this test's own: the process's real places stay unarmed.
        arm("a-test-of-the-trigger");
        assert!(catch(|| doing("machine", "run the machine")).is_ok());
        let Err(caught) = catch(|| doing("a-test-of-the-trigger", "be tested")) else {
            panic!("the armed place did not fail");
        };
        assert!(caught.message.starts_with(INJECTED), "{caught:?}");
        assert_eq!(caught.doing.as_deref(), Some("be tested"));
    }
}
