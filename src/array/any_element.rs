//! [`AnyElement`]: the element types [`ArrayView::read`] and [`ArrayView::write`] take, the
//! fixed-size [`Element`]s and the variable-length [`VlenElement`]s (`String`, `Vec<u8>`)
//! alike, so `view.read::<String>()` reads a `string` array as `view.read::<f32>()` reads a
//! `float32` one.

use futures::FutureExt;
use futures::future::BoxFuture;
use ndarray::{ArrayD, ArrayViewD};

use super::error::Result;
use super::{ArrayView, Element, VlenElement};

mod sealed {
    pub trait Sealed {}
}

/// A Rust type holding the elements of some Zarr data type: every [`Element`] (fixed-size,
/// read straight into the caller's memory) and every [`VlenElement`] (`String` for
/// `string`, `Vec<u8>` for `bytes`).
///
/// ```
/// # use zarrflow::{Array, ArraySpec, DataType};
/// # zarrflow::block_on(async {
/// let spec = ArraySpec::with_data_type([2], DataType::String);
/// let a = Array::create_at("memory://", &spec).await.unwrap();
/// a.view().write(&ndarray::arr1(&["x".to_string(), "yz".to_string()])).await.unwrap();
/// let words = a.view().read::<String>().await.unwrap();
/// assert_eq!(words.as_slice().unwrap(), ["x", "yz"]);
/// # }).unwrap();
/// ```
pub trait AnyElement: Clone + Send + Sync + 'static + sealed::Sealed {
    /// Reads `view` whole (the body of [`ArrayView::read`]).
    #[doc(hidden)]
    fn read_view(view: &ArrayView) -> BoxFuture<'_, Result<ArrayD<Self>>>;

    /// Writes `values`, broadcast to `view`'s shape (the body of [`ArrayView::write`]).
    #[doc(hidden)]
    fn write_view<'a>(
        view: &'a ArrayView,
        values: ArrayViewD<'a, Self>,
    ) -> BoxFuture<'a, Result<()>>;
}

impl<T: Element> sealed::Sealed for T {}
impl<T: Element> AnyElement for T {
    fn read_view(view: &ArrayView) -> BoxFuture<'_, Result<ArrayD<Self>>> {
        view.read_fixed::<T>().boxed()
    }
    fn write_view<'a>(
        view: &'a ArrayView,
        values: ArrayViewD<'a, Self>,
    ) -> BoxFuture<'a, Result<()>> {
        async move { view.write_fixed(&values).await }.boxed()
    }
}

macro_rules! vlen_any_element {
    ($t:ty) => {
        impl sealed::Sealed for $t {}
        impl AnyElement for $t {
            fn read_view(view: &ArrayView) -> BoxFuture<'_, Result<ArrayD<Self>>> {
                view.read_vlen::<$t>().boxed()
            }
            fn write_view<'a>(
                view: &'a ArrayView,
                values: ArrayViewD<'a, Self>,
            ) -> BoxFuture<'a, Result<()>> {
                async move { view.write_vlen(&values).await }.boxed()
            }
        }
    };
}
vlen_any_element!(String);
vlen_any_element!(Vec<u8>);

// `VlenElement` is implemented for exactly the types above.
const _: fn() = || {
    fn is_vlen<T: VlenElement>() {}
    is_vlen::<String>();
    is_vlen::<Vec<u8>>();
};
