// A "Copy" button copies the text of the field its data-copy names (a button: Enter
// and Space press it), then says so in its status line for screen readers too.
document.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-copy]");
  if (!button) return;
  const field = document.getElementById(button.dataset.copy);
  const said = document.getElementById(button.dataset.copy + "-copied");
  if (!field) return;
  const done = (text) => { if (said) said.textContent = text; };
  field.select();
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(field.value).then(
      () => done("Copied."),
      () => done("Select the link and copy it (Ctrl+C)."),
    );
  } else {
    done(document.execCommand("copy") ? "Copied." : "Select the link and copy it (Ctrl+C).");
  }
});
