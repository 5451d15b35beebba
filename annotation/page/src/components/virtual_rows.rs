//! Virtualized lists: only the rows in view (plus a margin) are in the DOM, so a run of
//! hundreds of steps or a list of thousands of runs scrolls and renders like a short one.

use std::ops::Range;

use yew::prelude::*;

/// Rows drawn beyond the visible ones on each side.
const OVERSCAN: usize = 6;

pub struct Window {
    pub range: Range<usize>,
    /// Space standing in for the rows above and below the range, in px.
    pub before: f64,
    pub after: f64,
    pub onscroll: Callback<Event>,
}

/// The rows of `total` (each `row_px` high) to draw in a scroller `view_px` high.
#[hook]
pub fn use_window(total: usize, row_px: f64, view_px: f64) -> Window {
    let top = use_state(|| 0.0f64);
    let onscroll = {
        let top = top.clone();
        Callback::from(move |e: Event| {
            let element: web_sys::Element = e.target_unchecked_into();
            top.set(element.scroll_top() as f64);
        })
    };
    let range = visible(total, row_px, view_px, *top);
    Window {
        before: range.start as f64 * row_px,
        after: (total - range.end) as f64 * row_px,
        range,
        onscroll,
    }
}

pub fn visible(total: usize, row_px: f64, view_px: f64, top: f64) -> Range<usize> {
    let first = ((top / row_px).floor() as usize).saturating_sub(OVERSCAN).min(total);
    let count = (view_px / row_px).ceil() as usize + 2 * OVERSCAN;
    first..(first + count).min(total)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_window_covers_the_view_and_never_passes_the_end() {
        assert_eq!(super::visible(1000, 50.0, 500.0, 0.0), 0..22);
        assert_eq!(super::visible(1000, 50.0, 500.0, 5000.0), 94..116);
        assert_eq!(super::visible(10, 50.0, 500.0, 0.0), 0..10);
        assert_eq!(super::visible(0, 50.0, 500.0, 300.0), 0..0);
    }
}
