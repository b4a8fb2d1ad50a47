(function(){
  // summary.html's only script: click a heading of a table.sortable to sort by it (numbers as numbers,
  // a cell's data-v first); type in an input.filter to show only the rows of its table that hold the text
  document.querySelectorAll('table.sortable').forEach(function(t){
    t.querySelectorAll('tr:first-child th').forEach(function(th,i){
      th.style.cursor='pointer';th.title='sort';
      th.addEventListener('click',function(){
        var rows=Array.from(t.querySelectorAll('tr')).slice(1),up=th.dataset.dir!=='up';
        th.dataset.dir=up?'up':'down';
        rows.sort(function(a,b){
          var x=a.children[i].dataset.v||a.children[i].textContent,y=b.children[i].dataset.v||b.children[i].textContent,
              p=parseFloat(x),q=parseFloat(y),c=(isNaN(p)||isNaN(q))?x.localeCompare(y):p-q;
          return up?c:-c;});
        rows.forEach(function(r){t.appendChild(r);});});});});
  document.querySelectorAll('input.filter').forEach(function(box){
    var t=document.getElementById(box.dataset.table);
    box.addEventListener('input',function(){
      var words=box.value.toLowerCase().split(/\s+/).filter(Boolean),shown=0;
      Array.from(t.querySelectorAll('tr')).slice(1).forEach(function(r){
        var text=r.textContent.toLowerCase(),ok=words.every(function(w){return text.indexOf(w)>=0;});
        r.style.display=ok?'':'none';shown+=ok;});
      box.title=shown+' shown';});});
})();
