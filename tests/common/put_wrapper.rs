//! [`put_wrapper!`](crate::put_wrapper): an `ObjectStore` that acts on PUTs and hands every
//! other call to the store it wraps, for tests that interfere with or observe writes.

/// Implements `ObjectStore` (and `Display`, `Debug`) for `$ty`, a struct with an `inner`
/// field that is an `ObjectStore`: `put_opts` runs `$body` with `$this` as `&self` and the
/// call's arguments as `$location`, `$payload`, `$opts`; every other method goes to
/// `inner` unchanged.
#[macro_export]
macro_rules! put_wrapper {
    ($ty:ident, |$this:ident, $location:ident, $payload:ident, $opts:ident| $body:block) => {
        impl std::fmt::Debug for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(stringify!($ty))
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(stringify!($ty))
            }
        }

        #[async_trait::async_trait]
        impl object_store::ObjectStore for $ty {
            async fn put_opts(
                &self,
                $location: &object_store::path::Path,
                $payload: object_store::PutPayload,
                $opts: object_store::PutOptions,
            ) -> object_store::Result<object_store::PutResult> {
                let $this = self;
                $body
            }
            async fn get_opts(
                &self,
                l: &object_store::path::Path,
                o: object_store::GetOptions,
            ) -> object_store::Result<object_store::GetResult> {
                self.inner.get_opts(l, o).await
            }
            fn delete_stream(
                &self,
                l: futures::stream::BoxStream<
                    'static,
                    object_store::Result<object_store::path::Path>,
                >,
            ) -> futures::stream::BoxStream<'static, object_store::Result<object_store::path::Path>>
            {
                self.inner.delete_stream(l)
            }
            fn list(
                &self,
                p: Option<&object_store::path::Path>,
            ) -> futures::stream::BoxStream<'static, object_store::Result<object_store::ObjectMeta>>
            {
                self.inner.list(p)
            }
            async fn list_with_delimiter(
                &self,
                p: Option<&object_store::path::Path>,
            ) -> object_store::Result<object_store::ListResult> {
                self.inner.list_with_delimiter(p).await
            }
            async fn put_multipart_opts(
                &self,
                l: &object_store::path::Path,
                o: object_store::PutMultipartOptions,
            ) -> object_store::Result<Box<dyn object_store::MultipartUpload>> {
                self.inner.put_multipart_opts(l, o).await
            }
            async fn copy_opts(
                &self,
                f: &object_store::path::Path,
                t: &object_store::path::Path,
                o: object_store::CopyOptions,
            ) -> object_store::Result<()> {
                self.inner.copy_opts(f, t, o).await
            }
            async fn rename_opts(
                &self,
                f: &object_store::path::Path,
                t: &object_store::path::Path,
                o: object_store::RenameOptions,
            ) -> object_store::Result<()> {
                self.inner.rename_opts(f, t, o).await
            }
        }
    };
}
