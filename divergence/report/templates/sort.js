document.querySelectorAll('table.slices').forEach(function(t){
  t.querySelectorAll('th').forEach(function(th,i){
    th.addEventListener('click',function(){
      var asc=!th.classList.contains('asc');
      t.querySelectorAll('th').forEach(function(h){h.classList.remove('asc','desc');});
      th.classList.add(asc?'asc':'desc');
      var body=t.tBodies[0],rows=Array.prototype.slice.call(body.rows);
      rows.sort(function(a,b){
        var x=a.cells[i].getAttribute('data-v'),y=b.cells[i].getAttribute('data-v');
        var fx=parseFloat(x),fy=parseFloat(y),nx=x===''||isNaN(fx),ny=y===''||isNaN(fy);
        if(nx&&ny){return asc?x.localeCompare(y):y.localeCompare(x);}
        if(nx){return 1;} if(ny){return -1;}
        return asc?fx-fy:fy-fx;});
      rows.forEach(function(r){body.appendChild(r);});
    });
  });
});
