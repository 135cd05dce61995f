//! An Assembly: [`record`] (what is kept), [`store`] (on disk, atomically), [`status`] (the
//! Assembly Status JSON clients read).

pub mod record;
pub mod status;
pub mod store;
