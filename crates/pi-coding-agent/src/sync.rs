//! Poison-tolerant locking, the one helper the crate uses for its `std::sync` locks.
//!
//! A panic while a lock is held (a listener, a hook, a tool) must not make every later use of
//! that state panic too: the guarded data is kept consistent by the code that holds the lock
//! (no invariant spans an unwinding point), so the poisoned guard is taken as it is.

use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard};

/// Locks `m`, recovering the guard of a poisoned mutex.
pub(crate) fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Read-locks `l`, recovering the guard of a poisoned lock.
pub(crate) fn read<T: ?Sized>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|e| e.into_inner())
}

/// Write-locks `l`, recovering the guard of a poisoned lock.
pub(crate) fn write<T: ?Sized>(l: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}
