// AlphaScout's page-side helpers. The background worker injects this file over CDP into an
// isolated world named "alphascout" the first time a tab needs it, so page scripts can
// neither see these functions nor replace the DOM APIs they use. No manifest content
// script, no host permissions. Everything read from the page is untrusted data.
(() => {
  if (globalThis.alphascout) return;
  globalThis.alphascout = Object.freeze({
    version: 1,
    /** Basic facts about the document. */
    describe() {
      return { title: document.title, url: location.href, readyState: document.readyState };
    },
  });
})();
