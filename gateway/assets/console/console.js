// Keyboard review for lists marked data-keyboard="rows": j/k move, o/Enter open, a/f press the row's buttons with
// data-key="a" / data-key="f". Served from the gateway (the Content-Security-Policy allows no inline script).
(function () {
  'use strict';
  var rows = [];
  var index = -1;

  function select(next) {
    if (rows.length === 0) return;
    if (index >= 0 && rows[index]) rows[index].classList.remove('selected');
    index = Math.max(0, Math.min(rows.length - 1, next));
    rows[index].classList.add('selected');
    rows[index].scrollIntoView({ block: 'nearest' });
  }

  function typing(target) {
    var tag = target && target.tagName;
    return tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT' || (target && target.isContentEditable);
  }

  document.addEventListener('DOMContentLoaded', function () {
    rows = Array.prototype.slice.call(
      document.querySelectorAll('[data-keyboard="rows"] [data-row], article[data-row]'),
    );
    if (rows.length > 0) select(0);
  });

  document.addEventListener('keydown', function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    var row = rows[index];
    switch (event.key) {
      case 'j':
        select(index + 1);
        break;
      case 'k':
        select(index - 1);
        break;
      case 'o':
      case 'Enter': {
        var link = row && row.querySelector('a.open');
        if (link) link.click();
        break;
      }
      case 'a':
      case 'f': {
        var button = row && row.querySelector('button[data-key="' + event.key + '"]');
        if (button) button.click();
        break;
      }
      default:
        return;
    }
    event.preventDefault();
  });
})();

// A file input marked data-read-into="<textarea id>" reads the chosen text file into that text area, so the form posts
// it as an ordinary urlencoded field (the console takes no multipart bodies).
(function () {
  'use strict';
  document.addEventListener('change', function (event) {
    var input = event.target;
    if (!input || input.tagName !== 'INPUT' || input.type !== 'file') return;
    var target = document.getElementById(input.getAttribute('data-read-into') || '');
    var file = input.files && input.files[0];
    if (!target || !file) return;
    file.text().then(function (text) {
      target.value = text;
    });
  });
})();
