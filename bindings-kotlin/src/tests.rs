//! Unit tests of the packed-delivery decoder.

use super::*;

#[test]
fn unpacks_and_refuses_malformed_buffers() {
    let mut ok = vec![1];
    ok.extend(7i64.to_be_bytes());
    ok.extend(1u32.to_be_bytes());
    ok.extend(1u32.to_be_bytes());
    ok.push(b'a');
    ok.extend(2u32.to_be_bytes());
    ok.extend(b"bc");
    ok.extend(b"body");
    let d = unpack_delivery(&ok).unwrap();
    assert_eq!(
        (d.now, d.headers, d.body),
        (Some(7), vec![("a", "bc")], &b"body"[..])
    );
    for bad in [
        &[][..],
        &[2],
        &[1, 0, 0],
        &[0, 0, 0, 0, 9],
        &[0, 0, 0, 0, 1, 0, 0, 0, 9, b'a', 0, 0, 0, 0],
        &[0, 0xff, 0xff, 0xff, 0xff],
        &[0, 0, 0, 0, 1, 0, 0, 0, 1, 0xff, 0, 0, 0, 0],
    ] {
        let e = unpack_delivery(bad).err().unwrap();
        assert!(matches!(e, Error::InvalidArgument { .. }), "{bad:?}");
    }
}
