//! The local time zone's offset from UTC, as the C library knows it (so it
//! follows `TZ` and daylight saving): for what is counted or decided in
//! local time (listening days, the automatic sleep timer's hours).

/// Seconds east of UTC at `secs` since the epoch; 0 when unknown.
// musl's libc crate deprecates the `time_t` alias (its width changed in musl
// 1.2); it is still the type `localtime_r` takes there.
#[allow(deprecated)]
pub fn utc_offset_secs(secs: i64) -> i64 {
    let t = secs as libc::time_t;
    // SAFETY: localtime_r writes only into the `tm` we own.
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&t, &mut tm).is_null() {
            0
        } else {
            tm.tm_gmtoff
        }
    }
}
