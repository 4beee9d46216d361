//! `.npy` files: any bytes read as a `.npy` file give the file or an `NpyError`, never a
//! panic or an allocation larger than the input; a file that reads holds exactly its
//! shape's data, both readers agree, and writing it again (little-endian, as `numpy.save`)
//! reads back to the same header values and data.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zarrflow::npy::{NpyHeader, NpyType, npy_bytes, read_npy, read_npy_vec};

fuzz_target!(|data: &[u8]| {
    let header = NpyHeader::parse(data);
    let Ok(npy) = read_npy(data) else {
        // a refused file is refused by both readers
        assert!(read_npy_vec(data.to_vec()).is_err());
        return;
    };
    let (parsed, _) = header.expect("a file that reads has a header that parses");
    assert_eq!(parsed, npy.header);
    assert_eq!(
        npy.header.data_len().expect("a read file's data length"),
        npy.data.len()
    );
    assert_eq!(read_npy_vec(data.to_vec()).expect("read_npy_vec"), npy);
    let ty = npy.ty();
    assert_eq!(NpyType::of(ty.data_type()), ty);
    let again = npy_bytes(ty, npy.shape(), &npy.data).expect("writing a file that was read");
    let back = read_npy(&again).expect("reading a written file");
    assert_eq!(back.shape(), npy.shape());
    assert_eq!(back.ty(), ty);
    assert_eq!(back.data, npy.data);
});
