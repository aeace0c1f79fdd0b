//! Dense index newtypes into one [`super::CpuProfile`]'s tables. An index is valid only
//! for the profile that made it; `NodeId`s from the trace are mapped to these, never used
//! as indices themselves (they are sparse and foreign).

macro_rules! index_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(u32);

        impl $name {
            pub(crate) fn new(i: usize) -> Self {
                $name(u32::try_from(i).expect("table larger than u32::MAX rows"))
            }
            /// The 0-based row.
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

index_type!(
    /// Row of a [`super::StackTable`]. Parents always have smaller indices than children.
    StackIndex
);
index_type!(
    /// Row of a [`super::FrameTable`].
    FrameIndex
);
