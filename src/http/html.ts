/** Text from the document put into the service's few HTML pages, escaped. */

// `"` as well, so that the same function serves text and attributes (always double-quoted here).
const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
export const escapeHtml = (text: string): string => text.replace(/[&<>"]/g, (c) => escapes[c]);

/** The document's code spans (`If-Match`) as <code>, the rest escaped: its prose uses no other inline Markdown. */
export const inlineHtml = (text: string): string =>
  escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');
